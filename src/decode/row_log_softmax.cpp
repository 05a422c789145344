#include "decode/row_log_softmax.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>

// CMakeLists.txt compiles this file with -ffp-contract=off: a fused multiply-add where one clone
// has FMA and another not would give the clones different bits.

// The helpers below take and return 16-float vectors; they are always inlined into the clones of
// log_softmax_row, so the ABI GCC warns about (such a value passed without AVX-512) never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace yoke {
namespace {

typedef float Floats16 __attribute__((vector_size(64)));
typedef int32_t Ints16 __attribute__((vector_size(64)));

inline Ints16 to_int(Floats16 v) { return __builtin_convertvector(v, Ints16); }
inline int32_t to_int(float v) { return int32_t(v); }
inline Floats16 to_float(Ints16 v) { return __builtin_convertvector(v, Floats16); }
inline float to_float(int32_t v) { return float(v); }
inline Floats16 as_float(Ints16 bits) {
  Floats16 f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline float as_float(int32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Cephes' expf, element-wise on a float or on 16: x clamped to [-87, 88] (so that 2^n below is a
// normal float: n in [-125, 127]; e^-87 ≈ 1.6e-38 stands for anything smaller), x = n·ln 2 + r
// with ln 2 in two parts, e^r by its degree-5 polynomial, times 2^n made from its exponent bits.
// A NaN stays NaN (every comparison with it is false).
template <typename F, typename I>
inline F exp_poly(F x) {
  const F zero{};
  x = x < -87.0f ? zero - 87.0f : x;
  x = x > 88.0f ? zero + 88.0f : x;
  F n = x * 1.44269504088896341f + 0.5f;
  F whole = to_float(to_int(n));   // truncated towards zero
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

}  // namespace

float row_exp(float x) { return exp_poly<float, int32_t>(x); }

// GCC's function multiversioning: one copy of the row for AVX-512, AVX2 and the x86-64 baseline,
// chosen when the program loads; the vector extension's operations are element-wise, so each
// gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void log_softmax_row(float* x, int64_t n) {
  // The maximum (its order does not matter); a NaN, which the comparisons skip, makes the row NaN,
  // as at::log_softmax does.
  float top = -INFINITY;
  bool nan = false;
  int64_t j = 0;
  if (n >= 16) {
    Floats16 m;
    std::memcpy(&m, x, sizeof m);
    Ints16 unordered = m != m;
    for (j = 16; j + 16 <= n; j += 16) {
      Floats16 v;
      std::memcpy(&v, x + j, sizeof v);
      m = v > m ? v : m;
      unordered |= v != v;
    }
    float lanes[16];
    int32_t flags[16];
    std::memcpy(lanes, &m, sizeof lanes);
    std::memcpy(flags, &unordered, sizeof flags);
    for (int i = 0; i < 16; ++i) top = lanes[i] > top ? lanes[i] : top, nan = nan || flags[i];
  }
  for (; j < n; ++j) top = x[j] > top ? x[j] : top, nan = nan || x[j] != x[j];
  if (nan) top = NAN;

  // Σ e^(x − top): lane i sums the block elements i, then the lanes fold in halves.
  Floats16 acc{};
  for (j = 0; j + 16 <= n; j += 16) {
    Floats16 v;
    std::memcpy(&v, x + j, sizeof v);
    acc += exp_poly<Floats16, Ints16>(v - top);
  }
  if (j < n) {
    float tail[16];
    for (int64_t i = 0; i < 16; ++i) tail[i] = j + i < n ? x[j + i] : top;
    Floats16 v;
    std::memcpy(&v, tail, sizeof v);
    Floats16 e = exp_poly<Floats16, Ints16>(v - top);
    std::memcpy(tail, &e, sizeof tail);
    for (int64_t i = n - j; i < 16; ++i) tail[i] = 0.0f;  // lanes past the row add nothing
    std::memcpy(&e, tail, sizeof e);
    acc += e;
  }
  float lanes[16];
  std::memcpy(lanes, &acc, sizeof lanes);
  for (int width = 8; width >= 1; width /= 2)
    for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
  const float log_sum = std::log(lanes[0]);

  // x − top − log Σ, in that order (as LibTorch writes it).
  for (j = 0; j + 16 <= n; j += 16) {
    Floats16 v;
    std::memcpy(&v, x + j, sizeof v);
    v = (v - top) - log_sum;
    std::memcpy(x + j, &v, sizeof v);
  }
  for (; j < n; ++j) x[j] = (x[j] - top) - log_sum;
}

at::Tensor log_softmax_in_place(at::Tensor x) {
  if (!x.device().is_cpu() || x.scalar_type() != at::kFloat || !x.is_contiguous() || x.dim() < 1 ||
      x.size(-1) < 1 || (x.requires_grad() && at::GradMode::is_enabled()))
    return at::log_softmax(x, -1);
  const int64_t n = x.size(-1), rows = x.numel() / n;
  float* data = x.data_ptr<float>();
  // A row of a 8000-word vocabulary is about 10 µs: 16 rows a task.
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) log_softmax_row(data + r * n, n);
  });
  return x;
}

}  // namespace yoke
