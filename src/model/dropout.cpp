#include "model/dropout.h"

#include "compat/torch.h"  // at::parallel_for, compiled with OpenMP

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <mutex>

// Vectors of 16 lanes are passed only between always-inline functions of one clone.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace yoke {

namespace {

// 16 unsigned 32-bit lanes (GCC's vector extension: element-wise operations, any instruction set).
using Lanes = uint32_t __attribute__((vector_size(64)));
using FloatLanes = float __attribute__((vector_size(64)));

// Chris Wellons' lowbias32 integer hash, on one value or 16: each output bit depends on every
// input bit.
template <typename U>
__attribute__((always_inline)) inline U mix32(U h) {
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}

// Element i's hash: two rounds, the first over the index's low half and the seed's, the second
// with the index's high half (a tensor past 2^32 elements) and the seed's other half.
template <typename U>
__attribute__((always_inline)) inline U element_hash(U low, uint32_t high, uint32_t s0, uint32_t s1) {
  return mix32<U>(mix32<U>(low * 0x9e3779b1u ^ s0) ^ (s1 + high));
}

// Elements [begin, end), 16 at a time where the index's high half is the same for all 16.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void mask_range(uint64_t seed, uint32_t drop_below, float keep, int64_t begin, int64_t end, float* mask) {
  const uint32_t s0 = uint32_t(seed), s1 = uint32_t(seed >> 32);
  const Lanes lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const FloatLanes kept = FloatLanes{} + keep, dropped = FloatLanes{};
  int64_t i = begin;
  for (; i + 16 <= end && uint32_t(i) <= 0xfffffff0u; i += 16) {
    const Lanes h = element_hash<Lanes>(lane + uint32_t(i), uint32_t(uint64_t(i) >> 32), s0, s1);
    const FloatLanes m = h < drop_below ? dropped : kept;
    std::memcpy(mask + i, &m, sizeof m);
  }
  for (; i < end; ++i)
    mask[i] = element_hash<uint32_t>(uint32_t(i), uint32_t(uint64_t(i) >> 32), s0, s1) < drop_below ? 0.0f : keep;
}

uint64_t seed_from_global_generator() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
}

}  // namespace

void dropout_mask(uint64_t seed, double p, int64_t n, float* mask) {
  // Dropped when the hash falls below p · 2^32 (p < 1 here, so it fits 32 bits).
  const auto drop_below = uint32_t(std::min(std::ldexp(p, 32), 4294967295.0));
  const float keep = float(1.0 / (1.0 - p));
  at::parallel_for(0, n, 1 << 15, [&](int64_t begin, int64_t end) { mask_range(seed, drop_below, keep, begin, end, mask); });
}

at::Tensor dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  if (!x.device().is_cpu() || x.scalar_type() != at::kFloat || p >= 1) return at::dropout(x, p, training);
  auto mask = at::empty(x.sizes(), x.options().requires_grad(false));
  dropout_mask(seed_from_global_generator(), p, mask.numel(), mask.data_ptr<float>());
  return x * mask;
}

}  // namespace yoke
