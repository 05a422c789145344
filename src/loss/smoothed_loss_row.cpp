#include "loss/smoothed_loss_row.h"

#include <cmath>
#include <cstring>

#include "util/float_vectors.h"

// -ffp-contract=off (CMakeLists.txt, YOKE_TORCH_FLAGS): every clone rounds alike.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace yoke {

using namespace float_vectors;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
SmoothedLossRow smoothed_loss_row(float* l, int64_t n, int64_t target, float a, float b, bool gradient) {
  SmoothedLossRow out{};
  out.target_logit = l[target];
  // Pass 1: the maximum (a NaN, which the comparisons skip, is caught by the sum) and Σ ℓ, lane i
  // over blocks of 16, the lanes folded in halves, the tail one element at a time.
  float top = -INFINITY, sum = 0.0f;
  int64_t j = 0;
  if (n >= 16) {
    Floats16 top16 = load16(l), sum16{};
    for (; j + 16 <= n; j += 16) {
      const Floats16 v = load16(l + j);
      top16 = v > top16 ? v : top16;
      sum16 += v;
    }
    sum = fold_halves(sum16);
    float lanes[16];
    std::memcpy(lanes, &top16, sizeof lanes);
    for (float x : lanes) top = x > top ? x : top;
  }
  for (; j < n; ++j) top = l[j] > top ? l[j] : top, sum += l[j];
  out.logit_sum = sum;
  if (sum != sum) top = NAN;  // a NaN logit makes the row NaN

  // Pass 2: e^(ℓ − max) over the row, and their sum.
  Floats16 acc{};
  for (j = 0; j + 16 <= n; j += 16) {
    const Floats16 e = exp_poly<Floats16, Ints16>(load16(l + j) - top);
    store16(l + j, e);
    acc += e;
  }
  float total = fold_halves(acc);
  for (; j < n; ++j) total += l[j] = exp_poly<float, int32_t>(l[j] - top);
  out.log_sum_exp = top + std::log(total);
  if (!gradient) return out;

  // Pass 3: (a + b·n)·p_v − b, p_v = e_v / Σ e; then the target's −a.
  const float scale = (a + b * float(n)) / total;
  for (j = 0; j + 16 <= n; j += 16) store16(l + j, load16(l + j) * scale - b);
  for (; j < n; ++j) l[j] = l[j] * scale - b;
  l[target] -= a;
  return out;
}

}  // namespace yoke
