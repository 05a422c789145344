#include "decode/beam_candidates.h"

#include <stdexcept>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace yoke {
namespace {

// The largest of x[0..16): the block's values can enter the list only if it can.
inline float block_max(const float* x) {
#if defined(__SSE2__)
  __m128 a = _mm_max_ps(_mm_loadu_ps(x), _mm_loadu_ps(x + 4));
  __m128 b = _mm_max_ps(_mm_loadu_ps(x + 8), _mm_loadu_ps(x + 12));
  a = _mm_max_ps(a, b);
  a = _mm_max_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(1, 0, 3, 2)));
  a = _mm_max_ps(a, _mm_shuffle_ps(a, a, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtss_f32(a);
#else
  float m = x[0];
  for (int j = 1; j < 16; ++j) m = x[j] > m ? x[j] : m;
  return m;
#endif
}

// A list of the m best (value, index) pairs seen so far, best first; a pair enters only when it
// beats the last, so among equal values the one seen first (the lower index) stays ahead.
class BestList {
 public:
  BestList(float* values, int64_t* index, int64_t m) : v_(values), i_(index), m_(m) {}
  bool full() const { return size_ == m_; }
  float last() const { return v_[m_ - 1]; }
  void offer(float v, int64_t idx) {
    if (size_ == m_) {
      if (!(v > v_[m_ - 1])) return;
    } else {
      ++size_;
    }
    int64_t pos = size_ - 1;
    for (; pos > 0 && v_[pos - 1] < v; --pos) {
      v_[pos] = v_[pos - 1];
      i_[pos] = i_[pos - 1];
    }
    v_[pos] = v;
    i_[pos] = idx;
  }

 private:
  float* v_;
  int64_t* i_;
  int64_t m_, size_ = 0;
};

// Offers row[j] + s (index base + j) for every j of the row. Blocks of 16 are skipped whole once
// the list is full and none of their sums can enter it; x ↦ x + s is monotone in floating point,
// so max(x) + s is the block's largest sum.
void offer_row_sse2(BestList& best, const float* row, int64_t vocab, float s, int64_t base) {
  int64_t j = 0;
  for (; j + 16 <= vocab; j += 16) {
    if (best.full() && !(block_max(row + j) + s > best.last())) continue;
    for (int64_t q = j; q < j + 16; ++q) best.offer(row[q] + s, base + q);
  }
  for (; j < vocab; ++j) best.offer(row[j] + s, base + j);
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same offers in one compare a block: the lanes whose sum beats the list's last, offered in
// index order. A lane left out cannot enter: its sum is at most the last at the block's start,
// and the last only rises while a block's sums enter. So the list ends as offer_row_sse2's.
__attribute__((target("avx512f"))) void offer_row_avx512(BestList& best, const float* row, int64_t vocab, float s,
                                                         int64_t base) {
  int64_t j = 0;
  const __m512 shift = _mm512_set1_ps(s);
  for (; j + 16 <= vocab; j += 16) {
    if (!best.full()) {
      for (int64_t q = j; q < j + 16; ++q) best.offer(row[q] + s, base + q);
      continue;
    }
    const __m512 sums = _mm512_add_ps(_mm512_loadu_ps(row + j), shift);
    for (unsigned lanes = _mm512_cmp_ps_mask(sums, _mm512_set1_ps(best.last()), _CMP_GT_OQ); lanes != 0;
         lanes &= lanes - 1) {
      const int64_t q = j + __builtin_ctz(lanes);
      best.offer(row[q] + s, base + q);
    }
  }
  for (; j < vocab; ++j) best.offer(row[j] + s, base + j);
}
const bool kHasAvx512 = __builtin_cpu_supports("avx512f");
#endif

void offer_row(BestList& best, const float* row, int64_t vocab, float s, int64_t base) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (kHasAvx512) return offer_row_avx512(best, row, vocab, s, base);
#endif
  offer_row_sse2(best, row, vocab, s, base);
}

}  // namespace

BeamCandidates best_candidates(const at::Tensor& lp, const std::vector<float>& scores, int64_t k, int64_t m,
                               const PrepareRow& prepare) {
  if (lp.dim() != 2 || lp.scalar_type() != at::kFloat)
    throw std::logic_error("best_candidates: lp must be a [rows, V] float tensor");
  const int64_t rows = lp.size(0), vocab = lp.size(1);
  if (k < 1 || rows % k != 0 || int64_t(scores.size()) != rows || m < 1 || m > k * vocab)
    throw std::logic_error("best_candidates: rows, scores, k and m do not fit");
  const int64_t n = rows / k;
  BeamCandidates out;
  out.per_sentence = m;
  if (prepare && (!lp.device().is_cpu() || !lp.is_contiguous()))
    throw std::logic_error("best_candidates: rows are prepared only in a contiguous tensor on the CPU");
  if (!lp.device().is_cpu()) {
    // On a GPU the sums and at::topk stay on the device; only the m best a sentence come back.
    auto s = at::tensor(scores, at::kFloat).to(lp.device()).view({rows, 1});
    auto top = (lp + s).view({n, k * vocab}).topk(m, 1);
    auto v = std::get<0>(top).to(at::kCPU).contiguous();
    auto x = std::get<1>(top).to(at::kCPU).contiguous();
    out.values.assign(v.data_ptr<float>(), v.data_ptr<float>() + n * m);
    out.index.assign(x.data_ptr<int64_t>(), x.data_ptr<int64_t>() + n * m);
    return out;
  }
  const auto c = lp.contiguous();
  out.values.resize(size_t(n * m));
  out.index.resize(size_t(n * m));
  float* p = c.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    BestList best(out.values.data() + i * m, out.index.data() + i * m, m);
    for (int64_t b = 0; b < k; ++b) {
      const int64_t row = i * k + b;
      if (prepare) prepare(p + row * vocab, row);
      offer_row(best, p + row * vocab, vocab, scores[size_t(row)], b * vocab);
    }
  }
  return out;
}

}  // namespace yoke
