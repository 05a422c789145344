// Random draws that give the same numbers on every standard library (std's distributions and
// std::shuffle do not), so a seed means the same batches and the same toy corpus everywhere.
#pragma once
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace yoke {

// Uniform integer in [0, n), by rejection sampling: exact.
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % n;
}

// Fisher-Yates.
template <typename T>
void shuffle_in_place(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_below(rng, i)]);
}

}  // namespace yoke
