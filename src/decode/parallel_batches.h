// Decoding several batches at once, one per worker thread, each worker's operators on
// threads_per_worker() threads (CTranslate2's inter_threads × intra_threads), and a batch's
// sentences in pieces side by side. Beam search over a small model spends most of its time in
// operator overhead between small matrix products, which more threads per operator do not
// shorten (measured in docs/performance.md, "Decoding workers").
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

namespace yoke {

// The workers to decode with on the CPU when the user names none: one per thread when `threads` >
// 0 (--threads), else one per core. Not at::get_num_threads(): Debian's LibTorch 1.13 counts 1
// on the 2-core development machine.
int default_workers(int threads);

// The LibTorch threads each of `workers` workers runs its operators on: an even share of
// at::get_num_threads(), at least 1. A worker thread sets it itself (at::set_num_threads): under
// OpenMP the count is per thread, and a new thread starts from the default.
int threads_per_worker(int workers);

// Calls decode(i) for every i in [0, count), on `workers` threads (1: here, in order). With more
// than one worker, this thread is one of them (its heap is warm, where a new thread's arena takes
// fresh pages, and a worker with threads starts one thread fewer for each batch's pieces), batches
// go to whichever worker is free, OpenBLAS's own thread pool is set to one thread for the duration
// (it would otherwise run each worker's products on every core) and each worker runs LibTorch's
// operators on threads_per_worker(workers) threads.
// `done(i)` is called after decode(i), one call at a time. The first exception thrown by a
// decode stops the others taking new batches and is rethrown here once all have stopped.
void run_batches(size_t count, int workers, const std::function<void(size_t)>& decode,
                 const std::function<void(size_t)>& done = {});

// A batch's sentences dealt to `pieces` pieces in turn (the j-th to piece j mod pieces): the batch
// is sorted by length, so the pieces' lengths are alike. Fewer pieces when the batch has fewer
// sentences; one (the batch) when pieces ≤ 1. run_batches decodes the pieces, a worker each.
std::vector<std::vector<size_t>> deal_batch(const std::vector<size_t>& batch, int pieces);

}  // namespace yoke
