#include "decode/row_argmax.h"

#include <emmintrin.h>

#include <cmath>

namespace yoke {

int64_t argmax_of(const float* x, int64_t n) {
  // Two passes: the largest value (16 lanes, no dependency between them), then the first index
  // holding it. A NaN is never kept by max, so a third lane set notes whether one was seen.
  int64_t i = 0;
  float top = -INFINITY;
  bool nan = false;
  if (n >= 16) {
    __m128 m0 = _mm_loadu_ps(x), m1 = _mm_loadu_ps(x + 4), m2 = _mm_loadu_ps(x + 8), m3 = _mm_loadu_ps(x + 12);
    __m128 u = _mm_or_ps(_mm_or_ps(_mm_cmpunord_ps(m0, m0), _mm_cmpunord_ps(m1, m1)),
                         _mm_or_ps(_mm_cmpunord_ps(m2, m2), _mm_cmpunord_ps(m3, m3)));
    for (i = 16; i + 16 <= n; i += 16) {
      const __m128 a = _mm_loadu_ps(x + i), b = _mm_loadu_ps(x + i + 4), c = _mm_loadu_ps(x + i + 8),
                   d = _mm_loadu_ps(x + i + 12);
      // _mm_max_ps(v, m) keeps m where v is NaN; m itself starts as the first block, which the
      // NaN lanes above have already noted.
      m0 = _mm_max_ps(a, m0), m1 = _mm_max_ps(b, m1), m2 = _mm_max_ps(c, m2), m3 = _mm_max_ps(d, m3);
      u = _mm_or_ps(u, _mm_or_ps(_mm_or_ps(_mm_cmpunord_ps(a, a), _mm_cmpunord_ps(b, b)),
                                 _mm_or_ps(_mm_cmpunord_ps(c, c), _mm_cmpunord_ps(d, d))));
    }
    nan = _mm_movemask_ps(u) != 0;
    alignas(16) float lanes[16];
    _mm_store_ps(lanes, m0), _mm_store_ps(lanes + 4, m1), _mm_store_ps(lanes + 8, m2), _mm_store_ps(lanes + 12, m3);
    for (float v : lanes) top = v > top ? v : top;  // a NaN lane returns below, before top is read
  }
  for (; i < n; ++i) {
    nan = nan || std::isnan(x[i]);
    top = x[i] > top ? x[i] : top;
  }
  if (nan) {
    for (int64_t j = 0; j < n; ++j)
      if (std::isnan(x[j])) return j;
  }
  // The first block of 16 that holds the largest value, then the index inside it.
  const __m128 t = _mm_set1_ps(top);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m128 e = _mm_or_ps(_mm_or_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + j), t), _mm_cmpeq_ps(_mm_loadu_ps(x + j + 4), t)),
                               _mm_or_ps(_mm_cmpeq_ps(_mm_loadu_ps(x + j + 8), t), _mm_cmpeq_ps(_mm_loadu_ps(x + j + 12), t)));
    if (_mm_movemask_ps(e)) break;
  }
  for (; j < n; ++j)
    if (x[j] == top) return j;
  return 0;  // unreachable: without a NaN, top is one of the values
}

std::vector<int64_t> row_argmax(const at::Tensor& scores) {
  TORCH_CHECK(scores.dim() == 2 && scores.size(1) > 0, "row_argmax: scores [rows, V] expected");
  const int64_t rows = scores.size(0), n = scores.size(1);
  std::vector<int64_t> out(size_t(rows), 0);
  if (scores.device().is_cpu() && scores.scalar_type() == at::kFloat) {
    const auto s = scores.contiguous();
    const float* p = s.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) out[size_t(r)] = argmax_of(p + r * n, n);
    return out;
  }
  const auto idx = scores.argmax(-1).to(at::kCPU, at::kLong).contiguous();
  const int64_t* p = idx.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) out[size_t(r)] = p[r];
  return out;
}

}  // namespace yoke
