#include "model/single_query_attention.h"

#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace yoke {
namespace {

// Eight floats as GCC's vector extension: two SSE registers in the baseline build, one AVX
// register in the AVX clone below. The operations are element-wise, so both give the same bits.
typedef float Floats8 __attribute__((vector_size(32)));

// The end of dot() below: lane i + lane i+4, then (0 + 2) + (1 + 3), then the products of the
// tail from `j` to n in order.
inline float lanes_and_tail(const Floats8& s, const float* a, const float* b, int64_t j, int64_t n) {
  const float t0 = s[0] + s[4], t1 = s[1] + s[5], t2 = s[2] + s[6], t3 = s[3] + s[7];
  float sum = (t0 + t2) + (t1 + t3);
  for (; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

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
  return lanes_and_tail(s, a, b, j, n);
}

// dot() of one query with four keys at once: the same sums in the same order for each, four
// independent chains that the processor overlaps (one alone waits on each add).
inline void dot4(const float* a, const float* b0, const float* b1, const float* b2, const float* b3, int64_t n,
                 float* out) {
  Floats8 s0 = {0, 0, 0, 0, 0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    Floats8 x, y0, y1, y2, y3;
    std::memcpy(&x, a + j, sizeof x);
    std::memcpy(&y0, b0 + j, sizeof y0);
    std::memcpy(&y1, b1 + j, sizeof y1);
    std::memcpy(&y2, b2 + j, sizeof y2);
    std::memcpy(&y3, b3 + j, sizeof y3);
    s0 += x * y0;
    s1 += x * y1;
    s2 += x * y2;
    s3 += x * y3;
  }
  out[0] = lanes_and_tail(s0, a, b0, j, n);
  out[1] = lanes_and_tail(s1, a, b1, j, n);
  out[2] = lanes_and_tail(s2, a, b2, j, n);
  out[3] = lanes_and_tail(s3, a, b3, j, n);
}

// out = Σ_t w[t]·v_t over n floats, t in order from a zero start: each element's sum is the same
// sequence of adds as y += w[t]·v_t one t at a time, kept in registers across t (64 floats at a
// time) instead of stored and loaded again for every t.
inline void weighted_sum(const float* w, int64_t len, const float* v, int64_t v_pos, float* out, int64_t n) {
  int64_t c = 0;
  for (; c + 64 <= n; c += 64) {
    Floats8 acc[8] = {};
    for (int64_t t = 0; t < len; ++t) {
      const float* x = v + t * v_pos + c;
      for (int i = 0; i < 8; ++i) {
        Floats8 xs;
        std::memcpy(&xs, x + 8 * i, sizeof xs);
        acc[i] += w[t] * xs;
      }
    }
    std::memcpy(out + c, acc, sizeof acc);
  }
  for (; c < n; ++c) {
    float y = 0;
    for (int64_t t = 0; t < len; ++t) y += w[t] * v[t * v_pos + c];
    out[c] = y;
  }
}

struct Rows {
  int64_t rows, queries, heads, dim, dh, len;  // queries: a row's query positions (1 in a decoding step)
  const float *q, *k, *v, *mask;  // mask: null, or [rows, T] with row stride mask_row
  int64_t q_row, q_pos, k_row, k_head, k_pos, v_row, v_head, v_pos, mask_row;
  const std::vector<int64_t>* kv_rows;
  float* out;
};

// The whole loop over rows and heads, compiled twice: for the x86-64 baseline (SSE2) and for AVX,
// chosen once when the program loads (GCC's function multiversioning). The profile of beam search
// had this loop at 14% of decoding with the baseline's 4-float vectors.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx", "default")))
#endif
void attend(const Rows& a, int64_t begin, int64_t end) {
  const float scale = float(1.0 / std::sqrt(double(a.dh)));
  std::vector<float> score(size_t(a.len > 0 ? a.len : 1));
  for (int64_t b = begin; b < end; ++b) {
    const float* mrow = a.mask ? a.mask + b * a.mask_row : nullptr;
    const int64_t kb = a.kv_rows->empty() ? b : (*a.kv_rows)[size_t(b)];
    for (int64_t i = 0; i < a.queries; ++i)
      for (int64_t h = 0; h < a.heads; ++h) {
        const float* qh = a.q + b * a.q_row + i * a.q_pos + h * a.dh;
        const float* kh = a.k + kb * a.k_row + h * a.k_head;
        const float* vh = a.v + kb * a.v_row + h * a.v_head;
        int64_t t = 0;
        for (; t + 4 <= a.len; t += 4)
          dot4(qh, kh + t * a.k_pos, kh + (t + 1) * a.k_pos, kh + (t + 2) * a.k_pos, kh + (t + 3) * a.k_pos, a.dh,
               &score[size_t(t)]);
        for (; t < a.len; ++t) score[size_t(t)] = dot(qh, kh + t * a.k_pos, a.dh);
        float top = -INFINITY;
        for (t = 0; t < a.len; ++t) {
          float s = score[size_t(t)] * scale;
          if (mrow) s += mrow[t];
          score[size_t(t)] = s;
          top = s > top ? s : top;
        }
        float total = 0;
        for (t = 0; t < a.len; ++t) total += (score[size_t(t)] = std::exp(score[size_t(t)] - top));
        const float inv = 1.0f / total;
        for (t = 0; t < a.len; ++t) score[size_t(t)] *= inv;  // the weights
        weighted_sum(score.data(), a.len, vh, a.v_pos, a.out + (b * a.queries + i) * a.dim + h * a.dh, a.dh);
      }
  }
}

// Both entry points: q [B, Tq, d] (last stride 1), k and v [B', H, T, d/H] (last stride 1), mask
// as mask_fits_every_query says.
at::Tensor attend_rows(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                       int64_t heads, const std::vector<int64_t>& kv_rows, const char* who) {
  const int64_t rows = q.dim() == 3 ? q.size(0) : 0, dim = q.size(-1), dh = dim / heads, len = k.size(2);
  bool rows_fit = kv_rows.empty() ? k.size(0) == rows : int64_t(kv_rows.size()) == rows;
  for (int64_t r : kv_rows) rows_fit = rows_fit && r >= 0 && r < k.size(0);
  if (q.dim() != 3 || k.dim() != 4 || !rows_fit || k.size(1) != heads || k.size(3) != dh ||
      !k.sizes().equals(v.sizes()) || q.stride(2) != 1 || k.stride(3) != 1 || v.stride(3) != 1 ||
      q.scalar_type() != at::kFloat || k.scalar_type() != at::kFloat || v.scalar_type() != at::kFloat ||
      !q.device().is_cpu() || !k.device().is_cpu() || !v.device().is_cpu() || !mask_fits_every_query(mask, rows, len))
    throw std::logic_error(std::string(who) + ": q [B, Tq, d], k and v [B', H, T, d/H] holding every row of kv_rows, "
                           "a mask that expands to [B, 1, 1, T], float on the CPU");
  at::Tensor m;
  if (mask.defined()) {
    m = mask.to(at::kFloat).expand({rows, 1, 1, len});
    if (m.stride(3) != 1) m = m.contiguous();
  }
  const int64_t queries = q.size(1);
  auto out = at::empty({rows, queries, dim}, q.options());  // every element written by weighted_sum
  const Rows a{rows, queries, heads, dim, dh, len,
               q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(), m.defined() ? m.data_ptr<float>() : nullptr,
               q.stride(0), q.stride(1), k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2),
               m.defined() ? m.stride(0) : 0, &kv_rows, out.data_ptr<float>()};
  // Rows are independent: with --threads N they are split over LibTorch's pool (each row's sums
  // are the same whichever thread runs it). About 8 query rows a task.
  at::parallel_for(0, rows, std::max<int64_t>(1, 8 / queries), [&](int64_t begin, int64_t end) { attend(a, begin, end); });
  return out;
}

}  // namespace

bool mask_fits_every_query(const at::Tensor& mask, int64_t rows, int64_t len) {
  return !mask.defined() || (mask.dim() <= 4 && at::is_expandable_to(mask.sizes(), {rows, 1, 1, len}));
}

at::Tensor single_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& mask, int64_t heads, const std::vector<int64_t>& kv_rows) {
  if (q.dim() != 3 || q.size(1) != 1)
    throw std::logic_error("single_query_attention: q [B, 1, d]");
  return attend_rows(q, k, v, mask, heads, kv_rows, "single_query_attention");
}

at::Tensor padded_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                            int64_t heads) {
  return attend_rows(q, k, v, mask, heads, {}, "padded_attention");
}

}  // namespace yoke
