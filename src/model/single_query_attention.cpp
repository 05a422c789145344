#include "model/single_query_attention.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace yoke {
namespace {

float dot(const float* a, const float* b, int64_t n) {
  int64_t j = 0;
  float sum = 0;
#if defined(__SSE2__)
  __m128 s0 = _mm_setzero_ps(), s1 = _mm_setzero_ps();
  for (; j + 8 <= n; j += 8) {
    s0 = _mm_add_ps(s0, _mm_mul_ps(_mm_loadu_ps(a + j), _mm_loadu_ps(b + j)));
    s1 = _mm_add_ps(s1, _mm_mul_ps(_mm_loadu_ps(a + j + 4), _mm_loadu_ps(b + j + 4)));
  }
  s0 = _mm_add_ps(s0, s1);
  s0 = _mm_add_ps(s0, _mm_shuffle_ps(s0, s0, _MM_SHUFFLE(1, 0, 3, 2)));
  s0 = _mm_add_ps(s0, _mm_shuffle_ps(s0, s0, _MM_SHUFFLE(2, 3, 0, 1)));
  sum = _mm_cvtss_f32(s0);
#endif
  for (; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

// y += a·x over n floats.
void axpy(float a, const float* x, float* y, int64_t n) {
  int64_t j = 0;
#if defined(__SSE2__)
  const __m128 va = _mm_set1_ps(a);
  for (; j + 4 <= n; j += 4) _mm_storeu_ps(y + j, _mm_add_ps(_mm_loadu_ps(y + j), _mm_mul_ps(va, _mm_loadu_ps(x + j))));
#endif
  for (; j < n; ++j) y[j] += a * x[j];
}

}  // namespace

at::Tensor single_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& mask, int64_t heads, const std::vector<int64_t>& kv_rows) {
  const int64_t rows = q.size(0), dim = q.size(-1), dh = dim / heads, len = k.size(2);
  bool rows_fit = kv_rows.empty() ? k.size(0) == rows : int64_t(kv_rows.size()) == rows;
  for (int64_t r : kv_rows) rows_fit = rows_fit && r >= 0 && r < k.size(0);
  if (q.dim() != 3 || q.size(1) != 1 || k.dim() != 4 || !rows_fit || k.size(1) != heads || k.size(3) != dh ||
      !k.sizes().equals(v.sizes()) || q.stride(2) != 1 || k.stride(3) != 1 || v.stride(3) != 1 ||
      q.scalar_type() != at::kFloat || k.scalar_type() != at::kFloat || v.scalar_type() != at::kFloat ||
      !q.device().is_cpu() || !k.device().is_cpu() || !v.device().is_cpu())
    throw std::logic_error("single_query_attention: q [B, 1, d], k and v [B', H, T, d/H] holding every row of kv_rows, "
                           "float on the CPU");
  at::Tensor m;
  if (mask.defined()) {
    m = mask.to(at::kFloat).expand({rows, 1, 1, len});
    if (m.stride(3) != 1) m = m.contiguous();
  }
  auto out = at::zeros({rows, 1, dim}, q.options());
  const float scale = float(1.0 / std::sqrt(double(dh)));
  const float *pq = q.data_ptr<float>(), *pk = k.data_ptr<float>(), *pv = v.data_ptr<float>();
  const float* pm = m.defined() ? m.data_ptr<float>() : nullptr;
  float* po = out.data_ptr<float>();
  std::vector<float> score(size_t(len > 0 ? len : 1));
  for (int64_t b = 0; b < rows; ++b) {
    const float* mrow = pm ? pm + b * m.stride(0) : nullptr;
    const int64_t kb = kv_rows.empty() ? b : kv_rows[size_t(b)];
    for (int64_t h = 0; h < heads; ++h) {
      const float* qh = pq + b * q.stride(0) + h * dh;
      const float* kh = pk + kb * k.stride(0) + h * k.stride(1);
      const float* vh = pv + kb * v.stride(0) + h * v.stride(1);
      float top = -INFINITY;
      for (int64_t t = 0; t < len; ++t) {
        float s = dot(qh, kh + t * k.stride(2), dh) * scale;
        if (mrow) s += mrow[t];
        score[size_t(t)] = s;
        top = s > top ? s : top;
      }
      float total = 0;
      for (int64_t t = 0; t < len; ++t) total += (score[size_t(t)] = std::exp(score[size_t(t)] - top));
      float* oh = po + b * dim + h * dh;
      const float inv = 1.0f / total;
      for (int64_t t = 0; t < len; ++t) axpy(score[size_t(t)] * inv, vh + t * v.stride(2), oh, dh);
    }
  }
  return out;
}

}  // namespace yoke
