// Batching of concurrent translation requests: requests wait in one queue per model; a worker
// takes the oldest, waits up to a short window for more with the same search options, and
// decodes them together under a token budget (as `yoke translate` decodes a big file), then
// hands each request its own results. Several workers decode batches at once on the CPU, one
// thread each, as `yoke translate --workers` does (decode/parallel_batches.h).
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "decode/search.h"
#include "model/transformer.h"

namespace yoke {

struct BatchingLimits {
  std::chrono::microseconds window{5000};  // how long the oldest request waits for company
  int batch_tokens = 0;                    // (source subwords + 1) × beam in one batch; 0: default_batch_tokens
  size_t max_queued_sentences = 2000;      // more waiting sentences than this: submit() refuses
  int workers = 1;                         // batches decoded at once, each on its own thread
};

// submit() refuses work because the queue is full (the server answers 503).
struct QueueFull : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class BatchingQueue {
 public:
  // `on_batch(sentences, target_tokens)` is told about each batch decoded (for the metrics).
  // With one worker, `model_mutex` is held while decoding: other users of the model (generation)
  // take it too and take turns. Several workers decode side by side without it (decoding only
  // reads the model); the caller keeps OpenBLAS to one thread then (BlasThreadsOverride).
  BatchingQueue(Ensemble model, std::mutex& model_mutex, BatchingLimits limits,
                std::function<void(size_t, size_t)> on_batch = {});
  ~BatchingQueue();  // stop()

  using Result = std::vector<std::vector<Hypothesis>>;  // per source: up to nbest hypotheses, best first
  // sources: ids without eos; guides: empty, or one per source (target prefixes). Throws
  // QueueFull when it would hold more than the limit.
  std::future<Result> submit(std::vector<std::vector<int>> sources, const SearchOptions& opts, int nbest,
                             std::vector<TargetGuide> guides = {});
  size_t queued_sentences() const;
  // Decodes what is queued, then the workers end; later submits throw QueueFull.
  void stop();

 private:
  struct Pending {
    std::vector<std::vector<int>> sources;
    SearchOptions opts;
    int nbest;
    std::vector<TargetGuide> guides;  // empty or one per source
    std::promise<Result> done;
    std::chrono::steady_clock::time_point arrived;
  };
  void work();
  static bool same_search(const Pending& a, const Pending& b);
  static size_t cost(const Pending& p);  // its share of the token budget

  Ensemble model_;  // one model or several decoded together
  std::mutex& model_mutex_;
  const BatchingLimits limits_;
  std::function<void(size_t, size_t)> on_batch_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  size_t queued_sentences_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace yoke
