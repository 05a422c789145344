#include "model/int8_quantize.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace yoke::int8 {

namespace {

// One value by the formula (int8_quantize.h); the vector versions' tails, and what their lanes give.
inline uint8_t quantize_one(float x, float inv_scale, float zero, float qmax) {
  return uint8_t(std::nearbyint(std::clamp(x * inv_scale + zero, 0.0f, qmax)));
}

// The smallest and largest of n floats (SSE2: every x86-64 processor has it). Four lane sets, so
// that no min or max waits for the one before it.
std::pair<float, float> range_of_sse2(const float* x, int64_t n) {
  float lo = INFINITY, hi = -INFINITY;
  int64_t i = 0;
  if (n >= 16) {
    __m128 mn[4], mx[4];
    for (int j = 0; j < 4; ++j) mn[j] = mx[j] = _mm_loadu_ps(x + 4 * j);
    for (i = 16; i + 16 <= n; i += 16) {
      for (int j = 0; j < 4; ++j) {
        const __m128 v = _mm_loadu_ps(x + i + 4 * j);
        mn[j] = _mm_min_ps(mn[j], v);
        mx[j] = _mm_max_ps(mx[j], v);
      }
    }
    alignas(16) float a[16], b[16];
    for (int j = 0; j < 4; ++j) _mm_store_ps(a + 4 * j, mn[j]), _mm_store_ps(b + 4 * j, mx[j]);
    for (int j = 0; j < 16; ++j) lo = std::min(lo, a[j]), hi = std::max(hi, b[j]);
  }
  for (; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  return {lo, hi};
}

// range_of_sse2 (above) and quantize_sse2 (below) for AVX-512: 16 floats an instruction instead of
// 4, the same results (min and max are exact; quantize multiplies and adds with a rounding each and
// converts with the same rounding, to values already in [0, qmax]). They were 4–5% of int8
// decoding (perf, AMD EPYC).
__attribute__((target("avx512f"))) std::pair<float, float> range_of_avx512(const float* x, int64_t n) {
  float lo = INFINITY, hi = -INFINITY;
  int64_t i = 0;
  if (n >= 64) {
    __m512 mn[4], mx[4];
    for (int j = 0; j < 4; ++j) mn[j] = mx[j] = _mm512_loadu_ps(x + 16 * j);
    for (i = 64; i + 64 <= n; i += 64) {
      for (int j = 0; j < 4; ++j) {
        const __m512 v = _mm512_loadu_ps(x + i + 16 * j);
        mn[j] = _mm512_min_ps(mn[j], v);
        mx[j] = _mm512_max_ps(mx[j], v);
      }
    }
    for (int j = 0; j < 4; ++j) lo = std::min(lo, _mm512_reduce_min_ps(mn[j])), hi = std::max(hi, _mm512_reduce_max_ps(mx[j]));
  }
  for (; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  return {lo, hi};
}

__attribute__((target("avx512f"))) void quantize_avx512(const float* x, uint8_t* q, int64_t n, float inv_scale,
                                                         float zero, float qmax) {
  const __m512 s = _mm512_set1_ps(inv_scale), z = _mm512_set1_ps(zero), lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(qmax);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 y = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), s), z), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(y)));
  }
  for (; i < n; ++i) q[i] = quantize_one(x[i], inv_scale, zero, qmax);
}

// Rounds to nearest even, as _mm_cvtps_epi32 does.
void quantize_sse2(const float* x, uint8_t* q, int64_t n, float inv_scale, float zero, float qmax) {
  const __m128 s = _mm_set1_ps(inv_scale), z = _mm_set1_ps(zero), lo = _mm_setzero_ps(), hi = _mm_set1_ps(qmax);
  auto four = [&](const float* p) {
    return _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(p), s), z), lo), hi));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_packs_epi32(four(x + i), four(x + i + 4));
    const __m128i b = _mm_packs_epi32(four(x + i + 8), four(x + i + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm_packus_epi16(a, b));
  }
  for (; i < n; ++i) q[i] = quantize_one(x[i], inv_scale, zero, qmax);
}

const bool kHasAvx512 = __builtin_cpu_supports("avx512f");

}  // namespace

std::pair<float, float> range_of(const float* x, int64_t n) {
  return kHasAvx512 ? range_of_avx512(x, n) : range_of_sse2(x, n);
}

void quantize(const float* x, uint8_t* q, int64_t n, float inv_scale, float zero, float qmax) {
  (kHasAvx512 ? quantize_avx512 : quantize_sse2)(x, q, n, inv_scale, zero, qmax);
}

// Four columns at a time (SSE2), in the same order of operations as one at a time.
void column_terms(const float* ws, const float* sums, const float* b, float scale, float zero, float* cs, float* ca,
                  int64_t n) {
  int64_t j = 0;
  const __m128 s = _mm_set1_ps(scale), z = _mm_set1_ps(zero);
  for (; j + 4 <= n; j += 4) {
    const __m128 c = _mm_mul_ps(s, _mm_loadu_ps(ws + j));
    _mm_storeu_ps(cs + j, c);
    _mm_storeu_ps(ca + j, _mm_sub_ps(_mm_loadu_ps(b + j), _mm_mul_ps(_mm_mul_ps(c, z), _mm_loadu_ps(sums + j))));
  }
  for (; j < n; ++j) {
    cs[j] = scale * ws[j];
    ca[j] = b[j] - cs[j] * zero * sums[j];
  }
}

}  // namespace yoke::int8
