#include "decode/batching_queue.h"

#include <algorithm>

#include <ATen/Parallel.h>

#include "decode/parallel_batches.h"
#include "decode/batched_decoding.h"

namespace yoke {

BatchingQueue::BatchingQueue(Ensemble model, std::mutex& model_mutex, BatchingLimits limits,
                             std::function<void(size_t, size_t)> on_batch)
    : model_(std::move(model)), model_mutex_(model_mutex), limits_(limits), on_batch_(std::move(on_batch)) {
  const int n = std::max(1, limits_.workers), intra = threads_per_worker(n);
  for (int w = 0; w < n; ++w)
    workers_.emplace_back([this, intra, n] {
      if (n > 1) at::set_num_threads(intra);
      work();
    });
}

BatchingQueue::~BatchingQueue() { stop(); }

void BatchingQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_)
    if (w.joinable()) w.join();
}

size_t BatchingQueue::queued_sentences() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_sentences_;
}

std::future<BatchingQueue::Result> BatchingQueue::submit(std::vector<std::vector<int>> sources,
                                                         const SearchOptions& opts, int nbest,
                                                         std::vector<TargetGuide> guides) {
  if (!guides.empty() && guides.size() != sources.size()) throw std::logic_error("BatchingQueue::submit: one guide per source");
  Pending p{std::move(sources), opts, nbest, std::move(guides), {}, std::chrono::steady_clock::now()};
  auto future = p.done.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw QueueFull("the server is shutting down");
    if (queued_sentences_ + p.sources.size() > limits_.max_queued_sentences)
      throw QueueFull("the queue is full: " + std::to_string(queued_sentences_) + " sentences wait (limit " +
                      std::to_string(limits_.max_queued_sentences) + "); try again shortly");
    queued_sentences_ += p.sources.size();
    queue_.push_back(std::move(p));
  }
  wake_.notify_all();
  return future;
}

bool BatchingQueue::same_search(const Pending& a, const Pending& b) {
  return a.opts.beam == b.opts.beam && a.opts.lenpen == b.opts.lenpen && a.opts.max_len_a == b.opts.max_len_a &&
         a.opts.max_len_b == b.opts.max_len_b && a.nbest == b.nbest;
}

size_t BatchingQueue::cost(const Pending& p) {
  size_t tokens = 0;
  for (const auto& s : p.sources) tokens += s.size() + 1;
  return tokens * size_t(std::max(1, p.opts.beam));
}

void BatchingQueue::work() {
  for (;;) {
    std::vector<Pending> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      // Wait for company until the window closes or the budget is full (never while stopping).
      const auto deadline = queue_.front().arrived + limits_.window;
      auto full = [&] {
        if (queue_.empty()) return true;  // another worker took them
        size_t tokens = 0;
        for (const auto& p : queue_)
          if (same_search(p, queue_.front())) tokens += cost(p);
        return tokens >= size_t(limits_.batch_tokens);
      };
      wake_.wait_until(lock, deadline, [&] { return stopping_ || full(); });
      // The oldest request and those after it with the same options, within the budget.
      size_t tokens = 0;
      for (auto it = queue_.begin(); it != queue_.end();) {
        if (!batch.empty() && !same_search(*it, batch.front())) { ++it; continue; }
        if (!batch.empty() && tokens + cost(*it) > size_t(limits_.batch_tokens)) break;
        tokens += cost(*it);
        queued_sentences_ -= it->sources.size();
        batch.push_back(std::move(*it));
        it = queue_.erase(it);
      }
      if (batch.empty()) continue;  // another worker took them while this one waited
    }
    std::vector<std::vector<int>> sources;
    std::vector<TargetGuide> guides;
    bool guided = false;
    for (const auto& p : batch) {
      sources.insert(sources.end(), p.sources.begin(), p.sources.end());
      if (p.guides.empty()) guides.resize(sources.size());
      else guides.insert(guides.end(), p.guides.begin(), p.guides.end());
      guided = guided || !p.guides.empty();
    }
    TranslateExtras extras;
    if (guided) extras.guides = &guides;
    try {
      Result all;
      {
        std::unique_lock<std::mutex> use(model_mutex_, std::defer_lock);
        if (workers_.size() == 1) use.lock();  // one worker takes turns with generation
        all = translate_ids_nbest(model_, sources, batch.front().opts, batch.front().nbest, limits_.batch_tokens, {},
                                  extras);
      }
      size_t at = 0, target_tokens = 0;
      for (const auto& list : all)
        if (!list.empty()) target_tokens += list.front().tokens.size();
      if (on_batch_) on_batch_(sources.size(), target_tokens);
      for (auto& p : batch) {
        Result mine(std::make_move_iterator(all.begin() + long(at)),
                    std::make_move_iterator(all.begin() + long(at + p.sources.size())));
        at += p.sources.size();
        p.done.set_value(std::move(mine));
      }
    } catch (...) {
      for (auto& p : batch) {
        try {
          p.done.set_exception(std::current_exception());
        } catch (const std::future_error&) {}  // answered before the failure
      }
    }
  }
}

}  // namespace yoke
