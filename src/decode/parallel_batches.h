// Decoding several batches at once, one per worker thread, each worker's operators on
// `threads_per_worker` threads (CTranslate2's inter_threads × intra_threads). Beam search over a
// small model spends most of its time in operator overhead between small matrix products, which
// more threads per operator do not shorten: on the 2-core development machine two workers of one
// thread each decoded 1.45× (fp32) to 2× (int8) faster than one worker of two threads
// (docs/performance.md, "Decoding workers").
#pragma once
#include <cstddef>
#include <functional>

namespace yoke {

// Calls decode(i) for every i in [0, count), on `workers` threads (1: here, in order). With more
// than one worker, batches go to whichever worker is free, OpenBLAS's own thread pool is set to one
// thread for the duration (it would otherwise run each worker's products on every core) and each
// worker runs LibTorch's operators on max(1, at::get_num_threads() / workers) threads.
// `done(i)` is called after decode(i), one call at a time. The first exception thrown by a
// decode stops the others taking new batches and is rethrown here once all have stopped.
void run_batches(size_t count, int workers, const std::function<void(size_t)>& decode,
                 const std::function<void(size_t)>& done = {});

}  // namespace yoke
