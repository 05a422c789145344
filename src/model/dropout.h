// Dropout in training: x · mask, the mask 0 with probability p and 1 / (1 − p) otherwise.
//
// LibTorch 1.13's CPU mask (bernoulli_, without MKL as Debian builds it) draws one number at a
// time from the global generator, on one thread: 25 ms for 4M floats on a 2-core Intel Xeon, a
// tenth of a training step. On the CPU the mask here is a hash of each element's index and a seed
// drawn once per call from LibTorch's global generator, so it is made on every thread at once, is
// the same whatever the thread count or instruction set, and follows at::manual_seed and the
// generator state a checkpoint saves. Elsewhere (a GPU, other types) at::dropout runs.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace yoke {

// x itself when !training or p == 0; zeros when p == 1.
at::Tensor dropout(const at::Tensor& x, double p, bool training);

// Pure: the mask dropout multiplies by, n floats into `mask`, element i from (seed, i) alone.
void dropout_mask(uint64_t seed, double p, int64_t n, float* mask);

}  // namespace yoke
