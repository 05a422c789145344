#include "decode/parallel_batches.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "util/thread_policy.h"

namespace yoke {

int default_workers(int threads) { return threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency())); }

int threads_per_worker(int workers) { return std::max(1, at::get_num_threads() / std::max(1, workers)); }

void run_batches(size_t count, int workers, const std::function<void(size_t)>& decode,
                 const std::function<void(size_t)>& done) {
  workers = int(std::min<size_t>(size_t(std::max(1, workers)), count));
  if (workers <= 1) {
    for (size_t i = 0; i < count; ++i) {
      decode(i);
      if (done) done(i);
    }
    return;
  }
  const int threads = at::get_num_threads(), intra = threads_per_worker(workers);
  BlasThreadsOverride one_blas_thread(1);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  // LibTorch sets a thread's count from a process-wide value at the thread's first query
  // (at::internal::lazy_init_num_threads), and every set_num_threads changes that value (another
  // caller's restore included): each worker queries first, then sets its own.
  auto work = [&] {
    at::get_num_threads();
    at::set_num_threads(intra);
    for (size_t i; !failed && (i = next++) < count;) {
      try {
        decode(i);
        if (done) {
          std::lock_guard<std::mutex> lock(mu);
          done(i);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  work();  // this thread is a worker too
  for (auto& t : pool) t.join();
  at::set_num_threads(threads);  // the workers' calls changed the default that new threads take
  if (error) std::rethrow_exception(error);
}

std::vector<std::vector<size_t>> deal_batch(const std::vector<size_t>& batch, int pieces) {
  const size_t n = std::min(batch.size(), size_t(std::max(1, pieces)));
  if (n <= 1) return {batch};
  std::vector<std::vector<size_t>> out(n);
  for (size_t j = 0; j < batch.size(); ++j) out[j % n].push_back(batch[j]);
  return out;
}

}  // namespace yoke
