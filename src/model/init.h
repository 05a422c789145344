// Initial weights of the model's projections, in one place so that every layer starts alike.
#pragma once
#include <cmath>

#include "compat/torch.h"
#include "embed/initial_values.h"

namespace yoke {

// Glorot & Bengio (2010) uniform: U(−b, b) with b = sqrt(6 / (fan_in + fan_out)), for a
// weight of shape [out, in].
inline at::Tensor xavier_uniform(int64_t out, int64_t in) {
  const double bound = std::sqrt(6.0 / double(in + out));
  return initial_uniform({out, in}, bound);
}

}  // namespace yoke
