#include "model/single_query_attention.h"

#include <ATen/ExpandUtils.h>
#include "compat/torch.h"  // at::parallel_for, compiled with OpenMP

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "util/float_vectors.h"

namespace yoke {
namespace {

// CMakeLists.txt compiles this file with -ffp-contract=off: the AVX-512 version below has fused
// multiply-add and the others not, and one fused where another rounds twice would differ in bits.

// The helpers take and return 16-float vectors; they are always inlined into the clones of
// attend(), so the ABI GCC warns about (such a value passed without AVX-512) never applies.
#pragma GCC diagnostic ignored "-Wpsabi"

// Eight and sixteen floats as GCC's vector extension: SSE, AVX or AVX-512 registers, whichever
// the clone has. The operations are element-wise, so every clone gives the same bits.
using namespace float_vectors;
typedef float Floats8 __attribute__((vector_size(32)));

YOKE_VECTOR_INLINE Floats8 load8(const float* p) {
  Floats8 x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
// Two blocks of eight side by side in one vector (one register on AVX-512).
YOKE_VECTOR_INLINE Floats16 pair(Floats8 low, Floats8 high) {
  return __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

// The products of the tail from `j` to n added to `sum` in order.
YOKE_VECTOR_INLINE float tail(float sum, const float* a, const float* b, int64_t j, int64_t n) {
  for (; j < n; ++j) sum += a[j] * b[j];
  return sum;
}

// The folding of lanes_and_tail (below) in each half of a vector at once (lanes 0 and 8 end with the sums):
// lane i + lane i+4, then (0 + 2) + (1 + 3). Three shuffles and adds in place of fourteen scalar
// steps for the two keys; the same adds, so the same bits.
YOKE_VECTOR_INLINE Floats16 fold_each_half(Floats16 s) {
  s += __builtin_shufflevector(s, s, 4, 5, 6, 7, 0, 0, 0, 0, 12, 13, 14, 15, 8, 8, 8, 8);
  s += __builtin_shufflevector(s, s, 2, 3, 0, 0, 0, 0, 0, 0, 10, 11, 8, 8, 8, 8, 8, 8);
  s += __builtin_shufflevector(s, s, 1, 0, 0, 0, 0, 0, 0, 0, 9, 8, 8, 8, 8, 8, 8, 8);
  return s;
}

// The end of dot() below: lane i + lane i+4, then (0 + 2) + (1 + 3), then the products of the
// tail from `j` to n in order.
YOKE_VECTOR_INLINE float lanes_and_tail(const Floats8& s, const float* a, const float* b, int64_t j, int64_t n) {
  const float t0 = s[0] + s[4], t1 = s[1] + s[5], t2 = s[2] + s[6], t3 = s[3] + s[7];
  return tail((t0 + t2) + (t1 + t3), a, b, j, n);
}

// Σ a·b in one fixed order, whatever the instruction set: eight running sums (lanes) over blocks
// of eight, then lane i + lane i+4, then (0 + 2) + (1 + 3), then the tail in order. No fused
// multiply-add (the file is compiled without contraction), so every machine rounds each product
// the same way and a decoding step's attention is the same on every x86-64 processor.
YOKE_VECTOR_INLINE float dot(const float* a, const float* b, int64_t n) {
  Floats8 s = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) s += load8(a + j) * load8(b + j);
  return lanes_and_tail(s, a, b, j, n);
}

// dot() of one query with four keys at once: the same sums in the same order for each, four
// independent chains that the processor overlaps (one alone waits on each add). Wide (AVX-512):
// two keys share a 16-float vector, each in its own half beside a copy of the query's block, so
// each half's lanes are dot()'s eight lanes and one instruction does two keys' work, same bits.
template <bool Wide>
YOKE_VECTOR_INLINE void dot4(const float* a, const float* b0, const float* b1, const float* b2, const float* b3, int64_t n,
                      float* out) {
  int64_t j = 0;
  if constexpr (Wide) {
    Floats16 s01 = {}, s23 = {};
    for (; j + 8 <= n; j += 8) {
      const Floats8 x = load8(a + j);
      const Floats16 xx = pair(x, x);
      s01 += xx * pair(load8(b0 + j), load8(b1 + j));
      s23 += xx * pair(load8(b2 + j), load8(b3 + j));
    }
    s01 = fold_each_half(s01);
    s23 = fold_each_half(s23);
    out[0] = tail(s01[0], a, b0, j, n);
    out[1] = tail(s01[8], a, b1, j, n);
    out[2] = tail(s23[0], a, b2, j, n);
    out[3] = tail(s23[8], a, b3, j, n);
  } else {
    Floats8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
    for (; j + 8 <= n; j += 8) {
      const Floats8 x = load8(a + j);
      s0 += x * load8(b0 + j);
      s1 += x * load8(b1 + j);
      s2 += x * load8(b2 + j);
      s3 += x * load8(b3 + j);
    }
    out[0] = lanes_and_tail(s0, a, b0, j, n);
    out[1] = lanes_and_tail(s1, a, b1, j, n);
    out[2] = lanes_and_tail(s2, a, b2, j, n);
    out[3] = lanes_and_tail(s3, a, b3, j, n);
  }
}

// out = Σ_t w[t]·v_t over n floats, v_t at v + at[t], t in order from a zero start: each
// element's sum is the same sequence of adds as y += w[t]·v_t one t at a time, whatever the
// vector width, kept in registers across t (64 floats, then a vector, at a time) instead of stored
// and loaded again for every t. Inlined into attend()'s versions: compiled alone, for the
// baseline, it had kept its sums on the stack (8.7% of int8 beam search, perf).
template <typename Floats>
YOKE_VECTOR_INLINE void weighted_sum(const float* w, int64_t len, const float* v, const int64_t* at, float* out, int64_t n) {
  constexpr int width = sizeof(Floats) / sizeof(float), parts = 64 / width;
  int64_t c = 0;
  for (; c + 64 <= n; c += 64) {
    Floats acc[parts] = {};
    for (int64_t t = 0; t < len; ++t) {
      const float* x = v + at[t] + c;
      const float wt = w[t];
#pragma GCC unroll 8
      for (int i = 0; i < parts; ++i) {
        Floats xs;
        std::memcpy(&xs, x + width * i, sizeof xs);
        acc[i] += wt * xs;
      }
    }
    std::memcpy(out + c, acc, sizeof acc);
  }
  for (; c + width <= n; c += width) {
    Floats acc = {};
    for (int64_t t = 0; t < len; ++t) {
      Floats xs;
      std::memcpy(&xs, v + at[t] + c, sizeof xs);
      acc += w[t] * xs;
    }
    std::memcpy(out + c, &acc, sizeof acc);
  }
  for (; c < n; ++c) {
    float y = 0;
    for (int64_t t = 0; t < len; ++t) y += w[t] * v[at[t] + c];
    out[c] = y;
  }
}

// score[t] = e^(score[t] − top) for t < len, by Cephes' expf 16 at a time (util/float_vectors.h),
// exactly 0 where the exponent is below −87 (a masked key, −∞, gets no weight at all, as
// e^−∞ = 0 says); returns their sum: lane i over blocks of 16, then the lanes folded in halves.
// score has room for whole blocks of 16. glibc's expf, one call a key, had cost more than the
// keys' dot products in the encoder's attention (int8 greedy search, perf).
YOKE_VECTOR_INLINE float exponentials(float* score, int64_t len, float top) {
  Floats16 sum = {};
  for (int64_t t = 0; t < len; t += 16) {
    const Floats16 x = load16(score + t) - top;
    const Floats16 e = first_lanes(x < -87.0f ? Floats16{} : exp_poly<Floats16, Ints16>(x), len - t);
    store16(score + t, e);
    sum += e;
  }
  return fold_halves(sum);
}

struct Rows {
  int64_t rows, queries, heads, dim, dh, len;  // queries: a row's query positions (1 in a decoding step)
  const float *q, *k, *v, *mask;  // mask: null, or [rows, T] with row stride mask_row
  int64_t q_row, q_pos, k_row, k_head, k_pos, v_row, v_head, v_pos, mask_row;
  const std::vector<int64_t>* kv_rows;
  const PositionRows* positions;  // null: every position of row b in row kv_rows[b] (or b)
  float* out;
};

// Where row b's keys and values of each position start: k + k_at[t], v + v_at[t] (head 0).
YOKE_VECTOR_INLINE void positions_of(const Rows& a, int64_t b, int64_t* k_at, int64_t* v_at) {
  const int64_t kb = a.kv_rows->empty() ? b : (*a.kv_rows)[size_t(b)];
  for (int64_t t = 0; t < a.len; ++t) {
    const int64_t row = a.positions ? a.positions->rows[b * a.positions->stride + t] : kb;
    k_at[t] = row * a.k_row + t * a.k_pos;
    v_at[t] = row * a.v_row + t * a.v_pos;
  }
}

// Asks for the cache lines of head h's keys and values at those positions.
YOKE_VECTOR_INLINE void fetch_head(const Rows& a, int64_t h, const int64_t* k_at, const int64_t* v_at) {
  const float* kh = a.k + h * a.k_head;
  const float* vh = a.v + h * a.v_head;
  for (int64_t t = 0; t < a.len; ++t)
    for (int64_t c = 0; c < a.dh; c += 16) {
      __builtin_prefetch(kh + k_at[t] + c);
      __builtin_prefetch(vh + v_at[t] + c);
    }
}

// The whole loop over rows and heads. Wide: 16-float vectors, for AVX-512; else 8-float ones.
// In a decoding step (one query a row) the keys and values come from memory, not cache: the step's
// weights pass through the cache between one layer's attention and the next step's. So while a
// (row, head) is computed, the next one's are asked for: in self-attention the next head's, or
// the next row's first (a hypothesis's positions lie in the rows of its ancestors, scattered, which
// the processor's own prefetching does not follow: 0.46 → 0.33 s of a 1000-sentence beam-4 run);
// in cross-attention, whose rows of one sentence read the same memory row one after another,
// the next sentence's, a head a (row, head) while the first row of a sentence is computed.
template <bool Wide>
YOKE_VECTOR_INLINE void attend_rows_of(const Rows& a, int64_t begin, int64_t end) {
  const float scale = float(1.0 / std::sqrt(double(a.dh)));
  std::vector<float> score(size_t((std::max<int64_t>(a.len, 1) + 15) / 16 * 16));
  // Row b's positions (k_at, v_at) and the row whose keys and values are fetched ahead (ahead_*).
  std::vector<int64_t> k_at(size_t(a.len)), v_at(size_t(a.len)), ahead_k(size_t(a.len)), ahead_v(size_t(a.len));
  const bool step = a.queries == 1, cross = step && !a.positions && !a.kv_rows->empty();
  const auto memory_row = [&](int64_t b) { return (*a.kv_rows)[size_t(b)]; };
  if (begin < end) positions_of(a, begin, k_at.data(), v_at.data());
  for (int64_t b = begin; b < end; ++b) {
    const float* mrow = a.mask ? a.mask + b * a.mask_row : nullptr;
    // Self-attention: the next row. Cross-attention: the next sentence's row, from its first row.
    int64_t ahead = -1;
    if (step && a.positions && b + 1 < end) ahead = b + 1;
    if (cross && (b == begin || memory_row(b) != memory_row(b - 1))) {
      for (int64_t n = b + 1; n < end && ahead < 0; ++n)
        if (memory_row(n) != memory_row(b)) ahead = n;
    }
    if (ahead >= 0) positions_of(a, ahead, ahead_k.data(), ahead_v.data());
    for (int64_t i = 0; i < a.queries; ++i)
      for (int64_t h = 0; h < a.heads; ++h) {
        if (cross && ahead >= 0) fetch_head(a, h, ahead_k.data(), ahead_v.data());
        if (step && a.positions) {
          if (h + 1 < a.heads)
            fetch_head(a, h + 1, k_at.data(), v_at.data());
          else if (ahead >= 0)
            fetch_head(a, 0, ahead_k.data(), ahead_v.data());
        }
        const float* qh = a.q + b * a.q_row + i * a.q_pos + h * a.dh;
        const float* kh = a.k + h * a.k_head;
        const float* vh = a.v + h * a.v_head;
        int64_t t = 0;
        for (; t + 4 <= a.len; t += 4)
          dot4<Wide>(qh, kh + k_at[size_t(t)], kh + k_at[size_t(t + 1)], kh + k_at[size_t(t + 2)], kh + k_at[size_t(t + 3)],
                     a.dh, &score[size_t(t)]);
        for (; t < a.len; ++t) score[size_t(t)] = dot(qh, kh + k_at[size_t(t)], a.dh);
        float top = -INFINITY;
        for (t = 0; t < a.len; ++t) {
          float s = score[size_t(t)] * scale;
          if (mrow) s += mrow[t];
          score[size_t(t)] = s;
          top = s > top ? s : top;
        }
        const float inv = 1.0f / exponentials(score.data(), a.len, top);
        for (t = 0; t < a.len; ++t) score[size_t(t)] *= inv;  // the weights
        weighted_sum<std::conditional_t<Wide, Floats16, Floats8>>(score.data(), a.len, vh, v_at.data(),
                                                                  a.out + (b * a.queries + i) * a.dim + h * a.dh, a.dh);
      }
    if (b + 1 == end) break;
    if (ahead == b + 1) {
      std::swap(k_at, ahead_k);
      std::swap(v_at, ahead_v);
    } else {
      positions_of(a, b + 1, k_at.data(), v_at.data());
    }
  }
}

// attend_rows_of compiled for AVX-512 and, with 8-float vectors, for AVX and the x86-64
// baseline (SSE2); one is chosen when the program loads. All give the same bits. With 16-float
// vectors the AVX build kept them on the stack, so AVX-512 is a version of its own.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target("avx512f"))) void attend_wide(const Rows& a, int64_t begin, int64_t end) {
  attend_rows_of<true>(a, begin, end);
}
__attribute__((target_clones("avx", "default"))) void attend_narrow(const Rows& a, int64_t begin, int64_t end) {
  attend_rows_of<false>(a, begin, end);
}
void attend(const Rows& a, int64_t begin, int64_t end) {
  static const bool wide = __builtin_cpu_supports("avx512f");
  wide ? attend_wide(a, begin, end) : attend_narrow(a, begin, end);
}
#else
void attend(const Rows& a, int64_t begin, int64_t end) { attend_rows_of<false>(a, begin, end); }
#endif

// Both entry points: q [B, Tq, d] (last stride 1), k and v [B', H, T, d/H] (last stride 1), mask
// as mask_fits_every_query says.
at::Tensor attend_rows(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                       int64_t heads, const std::vector<int64_t>& kv_rows, const PositionRows* positions, const char* who) {
  const int64_t rows = q.dim() == 3 ? q.size(0) : 0, dim = q.size(-1), dh = dim / heads, len = k.size(2);
  bool rows_fit = kv_rows.empty() ? k.size(0) == rows || positions : int64_t(kv_rows.size()) == rows;
  for (int64_t r : kv_rows) rows_fit = rows_fit && r >= 0 && r < k.size(0);
  if (positions) {
    rows_fit = rows_fit && kv_rows.empty() && positions->rows && positions->stride >= len;
    for (int64_t b = 0; rows_fit && b < rows; ++b)
      for (int64_t t = 0; t < len; ++t) {
        const int64_t r = positions->rows[b * positions->stride + t];
        rows_fit = rows_fit && r >= 0 && r < k.size(0);
      }
  }
  if (q.dim() != 3 || k.dim() != 4 || !rows_fit || k.size(1) != heads || k.size(3) != dh ||
      !k.sizes().equals(v.sizes()) || q.stride(2) != 1 || k.stride(3) != 1 || v.stride(3) != 1 ||
      q.scalar_type() != at::kFloat || k.scalar_type() != at::kFloat || v.scalar_type() != at::kFloat ||
      !q.device().is_cpu() || !k.device().is_cpu() || !v.device().is_cpu() || !mask_fits_every_query(mask, rows, len))
    throw std::logic_error(std::string(who) + ": q [B, Tq, d], k and v [B', H, T, d/H] holding every row of kv_rows "
                           "(or of positions, T a row), "
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
               m.defined() ? m.stride(0) : 0, &kv_rows, positions, out.data_ptr<float>()};
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
                                  const at::Tensor& mask, int64_t heads, const std::vector<int64_t>& kv_rows,
                                  const PositionRows* positions) {
  if (q.dim() != 3 || q.size(1) != 1)
    throw std::logic_error("single_query_attention: q [B, 1, d]");
  return attend_rows(q, k, v, mask, heads, kv_rows, positions, "single_query_attention");
}

at::Tensor padded_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                            int64_t heads) {
  return attend_rows(q, k, v, mask, heads, {}, nullptr, "padded_attention");
}

}  // namespace yoke
