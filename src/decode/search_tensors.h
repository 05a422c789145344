// Two small things the search loop, its steps and the ensemble scorer all use: the score of a
// token that may not be chosen, and a host index list moved to the model's device.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace yoke {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline at::Tensor index_tensor(const std::vector<int64_t>& v, const at::Device& device) {
  return at::tensor(v, at::kLong).to(device);
}

}  // namespace yoke
