#include "model/single_query_attention.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace yoke {
namespace {

// Eight floats as GCC's vector extension: two SSE registers in the baseline build, one AVX
// register in the AVX clone below. The operations are element-wise, so both give the same bits.
typedef float Floats8 __attribute__((vector_size(32)));

// Σ a·b in one fixed order, whatever the instruction set: eight running sums (lanes) over blocks
// of eight, then lane i + lane i+4, then (0 + 2) + (1 + 3), then the tail in order. No fused
// multiply-add (no clone below enables FMA), so every machine rounds each product the same way
// and a decoding step's attention is the same on every x86-64 processor.
inline float dot(const float* a, const float* b, int64_t n) {
  Floats8 s = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    Floats8 x, y;
    std::memcpy(&x, a + j, sizeof x);
    std::memcpy(&y, b + j, sizeof y);
    s += x * y;
  }
  const float t0 = s[0] + s[4], t1 = s[1] + s[5], t2 = s[2] + s[6], t3 = s[3] + s[7];
  float sum = (t0 + t2) + (t1 + t3);
  for (; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

// y += a·x over n floats.
inline void axpy(float a, const float* x, float* y, int64_t n) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    Floats8 xs, ys;
    std::memcpy(&xs, x + j, sizeof xs);
    std::memcpy(&ys, y + j, sizeof ys);
    ys += a * xs;
    std::memcpy(y + j, &ys, sizeof ys);
  }
  for (; j < n; ++j) y[j] += a * x[j];
}

struct Rows {
  int64_t rows, heads, dim, dh, len;
  const float *q, *k, *v, *mask;  // mask: null, or [rows, T] with row stride mask_row
  int64_t q_row, k_row, k_head, k_pos, v_row, v_head, v_pos, mask_row;
  const std::vector<int64_t>* kv_rows;
  float* out;
};

// The whole loop over rows and heads, compiled twice: for the x86-64 baseline (SSE2) and for AVX,
// chosen once when the program loads (GCC's function multiversioning). The profile of beam search
// had this loop at 14% of decoding with the baseline's 4-float vectors.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx", "default")))
#endif
void attend(const Rows& a) {
  const float scale = float(1.0 / std::sqrt(double(a.dh)));
  std::vector<float> score(size_t(a.len > 0 ? a.len : 1));
  for (int64_t b = 0; b < a.rows; ++b) {
    const float* mrow = a.mask ? a.mask + b * a.mask_row : nullptr;
    const int64_t kb = a.kv_rows->empty() ? b : (*a.kv_rows)[size_t(b)];
    for (int64_t h = 0; h < a.heads; ++h) {
      const float* qh = a.q + b * a.q_row + h * a.dh;
      const float* kh = a.k + kb * a.k_row + h * a.k_head;
      const float* vh = a.v + kb * a.v_row + h * a.v_head;
      float top = -INFINITY;
      for (int64_t t = 0; t < a.len; ++t) {
        float s = dot(qh, kh + t * a.k_pos, a.dh) * scale;
        if (mrow) s += mrow[t];
        score[size_t(t)] = s;
        top = s > top ? s : top;
      }
      float total = 0;
      for (int64_t t = 0; t < a.len; ++t) total += (score[size_t(t)] = std::exp(score[size_t(t)] - top));
      float* oh = a.out + b * a.dim + h * a.dh;
      const float inv = 1.0f / total;
      for (int64_t t = 0; t < a.len; ++t) axpy(score[size_t(t)] * inv, vh + t * a.v_pos, oh, a.dh);
    }
  }
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
  const Rows a{rows, heads, dim, dh, len,
               q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), m.defined() ? m.data_ptr<float>() : nullptr,
               q.stride(0), k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2),
               m.defined() ? m.stride(0) : 0, &kv_rows, out.data_ptr<float>()};
  attend(a);
  return out;
}

}  // namespace yoke
