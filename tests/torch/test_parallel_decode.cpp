// Decoding batches on several worker threads (decode/parallel_batches.h, `translate --workers`):
// every batch exactly once, errors reach the caller, and the translations are those of one worker.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <stdexcept>
#include <vector>

#include "decode/batch_loop.h"
#include "decode/parallel_batches.h"
#include "decode/batched_decoding.h"
#include "tiny_model.h"
#include "store/model_store.h"
#include "util/thread_policy.h"

using namespace yoke;
using namespace yoke::test;

TEST(ParallelBatches, EveryBatchOnceAndProgressOneAtATime) {
  for (int workers : {1, 3, 8}) {
    const size_t count = 50;
    std::vector<std::atomic<int>> seen(count);
    std::vector<size_t> order;
    std::atomic<int> in_done{0};
    int done_calls = 0;
    run_batches(
        count, workers, [&](size_t i) { ++seen[i]; },
        [&](size_t i) {
          EXPECT_EQ(in_done.fetch_add(1), 0) << "done() called from two threads at once";
          order.push_back(i);
          ++done_calls;
          --in_done;
        });
    for (size_t i = 0; i < count; ++i) EXPECT_EQ(seen[i].load(), 1) << "batch " << i << ", workers " << workers;
    EXPECT_EQ(done_calls, int(count));
    if (workers == 1)
      for (size_t i = 0; i < count; ++i) EXPECT_EQ(order[i], i) << "one worker runs the batches in order";
  }
}

TEST(ParallelBatches, TheFirstErrorReachesTheCaller) {
  std::atomic<int> ran{0};
  EXPECT_THROW(run_batches(
                   1000, 2,
                   [&](size_t i) {
                     ++ran;
                     if (i == 7) throw std::runtime_error("batch 7 failed");
                     std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a batch takes time
                   }),
               std::runtime_error);
  // The workers stop taking batches after the error: all 1000 would take 500 ms on 2 workers; a
  // bound of half of them holds unless the failing thread stalls for a quarter of a second.
  EXPECT_LT(ran.load(), 500);
  // LibTorch's thread count is what it was before.
  const int threads = at::get_num_threads();
  run_batches(4, 2, [](size_t) {});
  EXPECT_EQ(at::get_num_threads(), threads);
}

// With one thread per operator and one BLAS thread, a batch is decoded by the same code whichever
// worker takes it, so the translations and their scores are exactly those of one worker.
TEST(ParallelBatches, WorkersTranslateAsOneWorkerDoes) {
  at::manual_seed(21);
  auto model = build_model(tiny_config(Tie::all, Estimator::dot));
  model->eval();
  at::manual_seed(22);
  std::vector<std::vector<int>> sources;
  for (int i = 0; i < 40; ++i) {
    auto ids = at::randint(4, 24, {at::randint(1, 12, {1}).item<int64_t>()}, at::kLong);
    std::vector<int> s;
    for (int64_t j = 0; j < ids.size(0); ++j) s.push_back(int(ids[j].item<int64_t>()));
    sources.push_back(s);
  }
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  BlasThreadsOverride one_blas_thread(1);
  SearchOptions o;
  o.beam = 4;
  const int budget = 4 * 30;  // a few sentences a batch: many batches
  const auto one = translate_ids_nbest(*model, sources, o, 2, budget);
  for (int workers : {2, 3}) {
    o.workers = workers;
    const auto many = translate_ids_nbest(*model, sources, o, 2, budget);
    ASSERT_EQ(many.size(), one.size());
    for (size_t i = 0; i < one.size(); ++i) {
      ASSERT_EQ(many[i].size(), one[i].size()) << i;
      for (size_t h = 0; h < one[i].size(); ++h) {
        EXPECT_EQ(many[i][h].tokens, one[i][h].tokens) << "sentence " << i << ", workers " << workers;
        EXPECT_EQ(many[i][h].score, one[i][h].score) << "sentence " << i << ", workers " << workers;
      }
    }
  }
  at::set_num_threads(threads);
}

TEST(ParallelBatches, DealsABatchToPiecesInTurn) {
  const std::vector<size_t> batch{9, 3, 7, 1, 4, 8, 2};
  EXPECT_EQ(deal_batch(batch, 2), (std::vector<std::vector<size_t>>{{9, 7, 4, 2}, {3, 1, 8}}));
  EXPECT_EQ(deal_batch(batch, 3), (std::vector<std::vector<size_t>>{{9, 1, 2}, {3, 4}, {7, 8}}));
  EXPECT_EQ(deal_batch(batch, 1), (std::vector<std::vector<size_t>>{batch}));
  EXPECT_EQ(deal_batch(batch, 0), (std::vector<std::vector<size_t>>{batch}));
  // Never more pieces than sentences, and never an empty piece.
  EXPECT_EQ(deal_batch({5, 6}, 4), (std::vector<std::vector<size_t>>{{5}, {6}}));
}

// As many batches as workers (a batch's pieces, decode/batch_loop.h) run at once: each waits until
// all have started (a bound of 10 s in place of a hang), each on its own thread with its share of
// the threads; the caller's thread count is back afterwards, and an error reaches the caller.
// A worker's count must hold although LibTorch sets a thread's count from a process-wide value
// at its first query (under Prescott/2 a piece once ran on the caller's 2).
TEST(ParallelBatches, AsManyBatchesAsWorkersRunAtOnceEachOnItsOwnThreads) {
  const int before = at::get_num_threads();
  std::atomic<int> started{0}, finished{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::vector<int> threads_seen(3, 0);
  run_batches(3, 3, [&](size_t p) {
    ++started;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    EXPECT_EQ(started.load(), 3) << "piece " << p << " ran while another had not started";
    threads_seen[p] = at::get_num_threads();
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
    ++finished;
  });
  EXPECT_EQ(finished.load(), 3);
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(threads_seen, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(at::get_num_threads(), before);
  std::atomic<int> ran{0};
  EXPECT_THROW(run_batches(2, 2,
                          [&](size_t p) {
                            ++ran;
                            if (p == 1) throw std::runtime_error("piece 1 failed");
                          }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 2);
  EXPECT_EQ(at::get_num_threads(), before);
}

// A worker with two threads decodes its batch as two pieces dealt in turn (decode/batch_loop.h),
// each once, and reports the batch once; with one thread, the batch is one call.
TEST(ParallelBatches, AWorkersSecondThreadDecodesHalfOfEachBatch) {
  at::manual_seed(23);
  auto model = build_model(tiny_config());
  const std::vector<size_t> lengths{3, 9, 4, 9, 6, 2, 7};  // one batch: sorted 9, 9, 7, 6, 4, 3, 2
  const int before = at::get_num_threads();
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    std::mutex mu;
    std::vector<std::vector<size_t>> calls, reported;
    for_each_batch(
        *model, lengths, 1000, 1,
        [&](const std::vector<size_t>& idx, const at::Device&) {
          std::lock_guard<std::mutex> lock(mu);
          calls.push_back(idx);
        },
        [&](size_t done, const std::vector<size_t>& idx) {
          EXPECT_EQ(done, lengths.size());
          reported.push_back(idx);
        });
    const std::vector<size_t> sorted{1, 3, 6, 4, 2, 0, 5};
    EXPECT_EQ(reported, (std::vector<std::vector<size_t>>{sorted})) << threads << " threads";
    std::sort(calls.begin(), calls.end());
    if (threads == 1) EXPECT_EQ(calls, (std::vector<std::vector<size_t>>{sorted}));
    else EXPECT_EQ(calls, (std::vector<std::vector<size_t>>{{1, 6, 2, 5}, {3, 4, 0}}));
  }
  at::set_num_threads(before);
}
