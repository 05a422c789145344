#include "decode/row_log_softmax.h"

#include "compat/torch.h"  // at::parallel_for, compiled with OpenMP

#include <cmath>
#include <cstring>

#include "util/float_vectors.h"

// CMakeLists.txt compiles this file with -ffp-contract=off: a fused multiply-add where one clone
// has FMA and another not would give the clones different bits (util/float_vectors.h).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace yoke {

using namespace float_vectors;

float row_exp(float x) { return exp_poly<float, int32_t>(x); }

namespace {

// The exponentials of a block: exp_poly in the vector extension, or its AVX-512 form (the same bits).
struct PlainExp {
  YOKE_VECTOR_INLINE static Floats16 of(Floats16 v) { return exp_poly<Floats16, Ints16>(v); }
};
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
struct Avx512Exp {
  __attribute__((target("avx512f"))) static inline Floats16 of(Floats16 v) { return exp_poly_avx512(v); }
};
#endif

template <class Exp>
YOKE_VECTOR_INLINE void log_softmax_row_with(float* x, int64_t n, const float* next) {
  // The maximum (its order does not matter, but for which of +0 and -0 a row of zeros keeps); a
  // NaN, which the comparisons skip, makes the row NaN, as at::log_softmax does.
  float top = -INFINITY;
  bool nan = false;
  int64_t j = 0;
  if (n >= 16) {
    // Four maxima side by side: one would wait on the comparison before it at every block.
    Floats16 m = load16(x), m1 = m, m2 = m, m3 = m;
    Ints16 unordered = m != m, unordered1{}, unordered2{}, unordered3{};
    for (j = 16; j + 64 <= n; j += 64) {
      const Floats16 v = load16(x + j), v1 = load16(x + j + 16), v2 = load16(x + j + 32), v3 = load16(x + j + 48);
      m = v > m ? v : m;
      m1 = v1 > m1 ? v1 : m1;
      m2 = v2 > m2 ? v2 : m2;
      m3 = v3 > m3 ? v3 : m3;
      unordered |= v != v;
      unordered1 |= v1 != v1;
      unordered2 |= v2 != v2;
      unordered3 |= v3 != v3;
    }
    for (; j + 16 <= n; j += 16) {
      const Floats16 v = load16(x + j);
      m = v > m ? v : m;
      unordered |= v != v;
    }
    m = m1 > m ? m1 : m;
    m = m2 > m ? m2 : m;
    m = m3 > m ? m3 : m;
    unordered |= unordered1 | unordered2 | unordered3;
    float lanes[16];
    int32_t flags[16];
    std::memcpy(lanes, &m, sizeof lanes);
    std::memcpy(flags, &unordered, sizeof flags);
    for (int i = 0; i < 16; ++i) top = lanes[i] > top ? lanes[i] : top, nan = nan || flags[i];
  }
  for (; j < n; ++j) top = x[j] > top ? x[j] : top, nan = nan || x[j] != x[j];
  if (nan) top = NAN;

  // Σ e^(x − top): lane i sums the block elements i, then the lanes fold in halves. The next row
  // is fetched meanwhile, a cache line (16 floats) a block: this pass is bound by its arithmetic,
  // and the first pass over a row fresh from the output layer's product had waited on memory.
  Floats16 acc{};
  for (j = 0; j + 16 <= n; j += 16) {
    if (next) __builtin_prefetch(next + j);
    Floats16 v;
    std::memcpy(&v, x + j, sizeof v);
    acc += Exp::of(v - top);
  }
  if (j < n) {
    float tail[16];
    for (int64_t i = 0; i < 16; ++i) tail[i] = j + i < n ? x[j + i] : top;
    Floats16 v;
    std::memcpy(&v, tail, sizeof v);
    Floats16 e = Exp::of(v - top);
    std::memcpy(tail, &e, sizeof tail);
    for (int64_t i = n - j; i < 16; ++i) tail[i] = 0.0f;  // lanes past the row add nothing
    std::memcpy(&e, tail, sizeof e);
    acc += e;
  }
  const float log_sum = std::log(fold_halves(acc));

  // x − top − log Σ, in that order (as LibTorch writes it).
  for (j = 0; j + 16 <= n; j += 16) {
    Floats16 v;
    std::memcpy(&v, x + j, sizeof v);
    v = (v - top) - log_sum;
    std::memcpy(x + j, &v, sizeof v);
  }
  for (; j < n; ++j) x[j] = (x[j] - top) - log_sum;
}

}  // namespace

// One copy of the row for AVX-512 (its own exponential), and through GCC's function
// multiversioning one for AVX2 and the x86-64 baseline, chosen when the program loads; the vector
// extension's operations are element-wise, so each gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target("avx512f"))) static void log_softmax_row_avx512(float* x, int64_t n, const float* next) {
  log_softmax_row_with<Avx512Exp>(x, n, next);
}
__attribute__((target_clones("avx2", "default"))) static void log_softmax_row_narrow(float* x, int64_t n,
                                                                                    const float* next) {
  log_softmax_row_with<PlainExp>(x, n, next);
}
static const bool kHasAvx512 = __builtin_cpu_supports("avx512f");

void log_softmax_row(float* x, int64_t n, const float* next) {
  (kHasAvx512 ? log_softmax_row_avx512 : log_softmax_row_narrow)(x, n, next);
}
#else
void log_softmax_row(float* x, int64_t n, const float* next) { log_softmax_row_with<PlainExp>(x, n, next); }
#endif

at::Tensor log_softmax_in_place(at::Tensor x) {
  if (!x.device().is_cpu() || x.scalar_type() != at::kFloat || !x.is_contiguous() || x.dim() < 1 ||
      x.size(-1) < 1 || (x.requires_grad() && at::GradMode::is_enabled()))
    return at::log_softmax(x, -1);
  const int64_t n = x.size(-1), rows = x.numel() / n;
  float* data = x.data_ptr<float>();
  // A row of a 8000-word vocabulary is about 10 µs: 16 rows a task.
  at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) log_softmax_row(data + r * n, n, r + 1 < end ? data + (r + 1) * n : nullptr);
  });
  return x;
}

}  // namespace yoke
