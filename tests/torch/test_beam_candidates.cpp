// decode/beam_candidates.h: each sentence's m best continuations, against at::topk over the sums
// it replaces, and what at::topk leaves open (equal values, dead rows, fewer finite values than m).
#include <gtest/gtest.h>

#include <limits>

#include "decode/beam_candidates.h"
#include "decode/row_log_softmax.h"

using namespace yoke;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

}  // namespace

TEST(BeamCandidates, AreAtTopkOfTheSumsOnDistinctValues) {
  // Vocabulary sizes around the 16-value blocks (a remainder, none, one short), beams 1 to 5.
  for (int64_t vocab : {7, 16, 37, 8000}) {
    for (int64_t k : {1, 2, 5}) {
      at::manual_seed(vocab * 10 + k);
      const int64_t n = 3, m = std::min<int64_t>(2 * k, k * vocab);
      auto lp = at::log_softmax(at::randn({n * k, vocab}) * 4, -1);
      std::vector<float> scores;
      for (int64_t r = 0; r < n * k; ++r) scores.push_back(-0.7f * float(r % k));
      const auto got = best_candidates(lp, scores, k, m);
      auto top = (lp + at::tensor(scores).view({n * k, 1})).view({n, k * vocab}).topk(m, 1);
      auto v = std::get<0>(top).contiguous();
      auto x = std::get<1>(top).contiguous();
      ASSERT_EQ(got.per_sentence, m);
      for (int64_t j = 0; j < n * m; ++j) {
        // The same float additions: the values are equal, not close (randn's values are distinct).
        EXPECT_EQ(got.values[size_t(j)], v.data_ptr<float>()[j]) << "V " << vocab << " k " << k << " at " << j;
        EXPECT_EQ(got.index[size_t(j)], x.data_ptr<int64_t>()[j]) << "V " << vocab << " k " << k << " at " << j;
      }
    }
  }
}

TEST(BeamCandidates, EqualValuesComeLowerIndexFirst) {
  // Two rows of one sentence: row 1 repeats row 0 and has the same score, so every value appears
  // twice, at b·V + token for b = 0 and 1; the earlier (row 0) is ranked first, then ties within a
  // row by token.
  auto lp = at::tensor({-1.0f, -0.5f, -0.5f, -3.0f, -2.0f, -0.5f}).view({1, 6}).repeat({2, 1});
  const auto got = best_candidates(lp, {0.0f, 0.0f}, 2, 6);
  const std::vector<int64_t> want{1, 2, 5, 7, 8, 11};
  EXPECT_EQ(got.index, want);
  for (float v : got.values) EXPECT_EQ(v, -0.5f);
}

TEST(BeamCandidates, DeadRowsNeverBeatLiveOnesAndFillTheRestWithMinusInfinity) {
  // The first step of a beam search: one live row (score 0), k − 1 dead ones (−inf).
  const int64_t k = 3, vocab = 40;
  auto lp = at::log_softmax(at::randn({k, vocab}), -1);
  const auto got = best_candidates(lp, {0.0f, kNegInf, kNegInf}, k, 2 * k);
  auto want = lp[0].topk(2 * k);
  for (int64_t j = 0; j < 2 * k; ++j) {
    EXPECT_LT(got.index[size_t(j)], vocab) << "a dead row's candidate at " << j;
    EXPECT_EQ(got.values[size_t(j)], std::get<0>(want)[j].item<float>());
  }
  // Fewer finite values than m: the rest are −inf, after every finite one.
  auto tiny = at::log_softmax(at::randn({2, 3}), -1);
  const auto few = best_candidates(tiny, {0.0f, kNegInf}, 2, 5);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isfinite(few.values[size_t(j)]));
  for (int j = 3; j < 5; ++j) EXPECT_EQ(few.values[size_t(j)], kNegInf);
}

TEST(BeamCandidates, RowsPreparedOneAtATimeGiveWhatPreparingThemAllFirstGives) {
  // A search's step on the CPU: logits normalized a row at a time just before the row is read
  // (and a row's tokens ruled out), against log_softmax_in_place over all rows first.
  const int64_t n = 5, k = 4, vocab = 8000;
  at::manual_seed(11);
  const auto logits = at::randn({n * k, vocab}) * 5;
  std::vector<float> scores;
  for (int64_t r = 0; r < n * k; ++r) scores.push_back(r % k == 3 ? kNegInf : -0.3f * float(r % k));
  auto rule_out = [](float* row, int64_t r) {
    if (r % 3 == 0) row[r] = kNegInf;
  };
  auto all_first = log_softmax_in_place(logits.clone());
  for (int64_t r = 0; r < n * k; ++r) rule_out(all_first[r].data_ptr<float>(), r);
  const auto want = best_candidates(all_first, scores, k, 2 * k);
  auto by_row = logits.clone();
  const auto got = best_candidates(by_row, scores, k, 2 * k, [&](float* row, int64_t r) {
    log_softmax_row(row, vocab);
    rule_out(row, r);
  });
  // Exact: both sides run the one code path (log_softmax_row on the same row's floats, then the
  // same additions), so their bits must agree; a search's ranking rests on it.
  EXPECT_EQ(got.values, want.values);
  EXPECT_EQ(got.index, want.index);
  EXPECT_TRUE(at::equal(by_row, all_first));  // and the rows are left as they were prepared
  EXPECT_THROW(best_candidates(by_row.t(), {0, 0}, 2, 2, [](float*, int64_t) {}), std::logic_error);
}

TEST(BeamCandidates, RefusesShapesThatDoNotFit) {
  auto lp = at::zeros({4, 10});
  EXPECT_THROW(best_candidates(lp, {0, 0, 0}, 2, 4), std::logic_error);     // 3 scores for 4 rows
  EXPECT_THROW(best_candidates(lp, {0, 0, 0, 0}, 3, 4), std::logic_error);  // 4 rows are not k = 3 a sentence
  EXPECT_THROW(best_candidates(lp, {0, 0, 0, 0}, 2, 21), std::logic_error); // m over k·V
  EXPECT_THROW(best_candidates(lp.to(at::kDouble), {0, 0, 0, 0}, 2, 4), std::logic_error);
}
