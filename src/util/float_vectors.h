// Sixteen floats in GCC's vector extension, and Cephes' expf on one float or on sixteen: the
// arithmetic of the kernels that must give the same bits on every x86-64 processor (AVX-512, AVX2
// or AVX, the SSE2 baseline: GCC target_clones picks one when the program loads). The operations
// are element-wise, so each instruction set rounds them alike, provided no multiply-add is fused
// in one and not another: a file that includes this compiles with -ffp-contract=off (CMakeLists.txt).
// Everything is always inlined into the caller's clones, so the ABI GCC warns about (a 16-float
// value passed without AVX-512) never applies.
#pragma once
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace yoke::float_vectors {

#define YOKE_VECTOR_INLINE __attribute__((always_inline)) inline

typedef float Floats16 __attribute__((vector_size(64)));
typedef int32_t Ints16 __attribute__((vector_size(64)));

YOKE_VECTOR_INLINE Floats16 load16(const float* p) {
  Floats16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
YOKE_VECTOR_INLINE void store16(float* p, const Floats16& v) { std::memcpy(p, &v, sizeof v); }

YOKE_VECTOR_INLINE Ints16 to_int(Floats16 v) { return __builtin_convertvector(v, Ints16); }
YOKE_VECTOR_INLINE int32_t to_int(float v) { return int32_t(v); }
YOKE_VECTOR_INLINE Floats16 to_float(Ints16 v) { return __builtin_convertvector(v, Floats16); }
YOKE_VECTOR_INLINE float to_float(int32_t v) { return float(v); }
YOKE_VECTOR_INLINE Floats16 as_float(Ints16 bits) {
  Floats16 f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
YOKE_VECTOR_INLINE float as_float(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Cephes' expf, element-wise on a float (F float, I int32_t) or on 16 (Floats16, Ints16): x
// clamped to [-87, 88] (so that 2^n below is a normal float: n in [-125, 127]; e^-87 ≈ 1.6e-38
// stands for anything smaller), x = n·ln 2 + r with ln 2 in two parts, e^r by its degree-5
// polynomial, times 2^n made from its exponent bits. About 1 ulp. A NaN stays NaN (every
// comparison with it is false).
template <typename F, typename I>
YOKE_VECTOR_INLINE F exp_poly(F x) {
  const F zero{};
  x = x < -87.0f ? zero - 87.0f : x;
  x = x > 88.0f ? zero + 88.0f : x;
  F n = x * 1.44269504088896341f + 0.5f;
  F whole = to_float(to_int(n));         // truncated towards zero
  n = whole > n ? whole - 1.0f : whole;  // floor
  x = x - n * 0.693359375f;
  x = x - n * -2.12194440e-4f;
  const F z = x * x;
  F y = x * 1.9875691500e-4f + 1.3981999507e-3f;
  y = y * x + 8.3334519073e-3f;
  y = y * x + 4.1665795894e-2f;
  y = y * x + 1.6666665459e-1f;
  y = y * x + 5.0000001201e-1f;
  y = y * z + x + 1.0f;
  const I bits = (to_int(n) + 127) << 23;
  return y * as_float(bits);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// exp_poly on 16 floats with AVX-512's own instructions where they give the same bits in fewer
// steps: the clamps as max and min (vmaxps returns its second operand when one is a NaN, so a NaN
// stays NaN as in the comparisons), the floor as one vrndscaleps (exact, as is the truncation and
// correction it replaces), and the product by 2^n as vscalefps (n in [-125, 127]: both multiply by
// the same power of two, exactly). Only for callers compiled for AVX-512 (target("avx512f")).
__attribute__((target("avx512f"), always_inline)) inline Floats16 exp_poly_avx512(Floats16 v) {
  __m512 x = _mm512_max_ps(_mm512_set1_ps(-87.0f), __m512(v));
  x = _mm512_min_ps(_mm512_set1_ps(88.0f), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                                      _mm512_set1_ps(0.5f)),
                                        _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  x = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f)));
  x = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(-2.12194440e-4f)));
  const __m512 z = _mm512_mul_ps(x, x);
  __m512 y = _mm512_add_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.9875691500e-4f)), _mm512_set1_ps(1.3981999507e-3f));
  y = _mm512_add_ps(_mm512_mul_ps(y, x), _mm512_set1_ps(8.3334519073e-3f));
  y = _mm512_add_ps(_mm512_mul_ps(y, x), _mm512_set1_ps(4.1665795894e-2f));
  y = _mm512_add_ps(_mm512_mul_ps(y, x), _mm512_set1_ps(1.6666665459e-1f));
  y = _mm512_add_ps(_mm512_mul_ps(y, x), _mm512_set1_ps(5.0000001201e-1f));
  y = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(y, z), x), _mm512_set1_ps(1.0f));
  return Floats16(_mm512_scalef_ps(y, n));
}
#endif

// v with lanes `count` and above set to 0 (a row's last, partial block of 16).
YOKE_VECTOR_INLINE Floats16 first_lanes(Floats16 v, int64_t count) {
  const Ints16 lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return lane < int32_t(count < 16 ? count : 16) ? v : Floats16{};
}

// The sum of a vector's lanes in one order: folded in halves (lane i + lane i+8, then i + i+4, ...).
YOKE_VECTOR_INLINE float fold_halves(const Floats16& v) {
  float lanes[16];
  std::memcpy(lanes, &v, sizeof lanes);
  for (int width = 8; width >= 1; width /= 2)
    for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
  return lanes[0];
}

}  // namespace yoke::float_vectors

#pragma GCC diagnostic pop
