// The index of each row's largest score, as at::argmax(-1) gives it (the first of equal maxima; a
// NaN counts as the largest), without its scalar loop: greedy search takes it over the whole
// vocabulary for every sentence at every step.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace yoke {

// scores [rows, V], any device and type; fp32 on the CPU takes the vectorized loop.
std::vector<int64_t> row_argmax(const at::Tensor& scores);

// One row of n ≥ 1 floats.
int64_t argmax_of(const float* x, int64_t n);

}  // namespace yoke
