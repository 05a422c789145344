// The components of the beam search's loop (decode/search_steps.h) and the sampler
// (decode/token_sampler.h), each on hand-made inputs: what each does at its point of a step, apart
// from the loop. The loop with them is checked end to end by test_decode_features.cpp and test_nbest.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "decode/search_steps.h"
#include "decode/token_sampler.h"
#include "text/vocab.h"

using namespace yoke;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Sources of 3 and 7 tokens (eos included), right-padded.
at::Tensor two_sources() {
  auto src = at::zeros({2, 7}, at::kLong);
  src[0].narrow(0, 0, 3).fill_(9);
  src[0][2] = Vocab::eos;
  src[1].fill_(9);
  src[1][6] = Vocab::eos;
  return src;
}

}  // namespace

TEST(SearchSteps, TheLengthLimitIsASourceLengthRuleWithinThePositionsWithRoomForGuides) {
  SearchOptions o;
  o.max_len_a = 1.5;
  o.max_len_b = 2;
  const LengthLimit plain(two_sources(), o, 64);
  EXPECT_EQ(plain.of(0), 6);  // trunc(1.5·3 + 2)
  EXPECT_EQ(plain.of(1), 12);
  EXPECT_FALSE(plain.at_end(0, 5));
  EXPECT_TRUE(plain.at_end(0, 6));
  EXPECT_TRUE(plain.last(0, 5));
  EXPECT_EQ(LengthLimit(two_sources(), o, 10).of(1), 9);  // never past the positions minus one
  TargetGuide g;
  g.prefix = {5, 6, 7, 8, 9, 10, 11, 12};
  g.constraints = {{20, 21}, {22}};
  const std::vector<Row> rows = {{0, &g}, {1, nullptr}};
  const LengthLimit guided(two_sources(), o, 64, rows);
  EXPECT_EQ(guided.of(0), 8 + 3 + 1);  // the prefix, the constraints' tokens and one more
  EXPECT_EQ(guided.of(1), 12);
}

TEST(SearchSteps, PrefixesFixTheirTokensAndForcedRowsKeepOnlyTheirToken) {
  TargetGuide g;
  g.prefix = {5, 6};
  const std::vector<Row> rows = {{0, nullptr}, {1, &g}};
  const PrefixForcing prefixes(rows);
  EXPECT_EQ(prefixes.token(0, 0), -1);
  EXPECT_EQ(prefixes.token(1, 0), 5);
  EXPECT_EQ(prefixes.token(1, 1), 6);
  EXPECT_EQ(prefixes.token(1, 2), -1);
  EXPECT_EQ(PrefixForcing({}).token(0, 0), -1);

  auto lp = at::log_softmax(at::randn({3, 8}), 1);
  const auto before = lp.clone();
  ForcedTokens forced;
  forced.add(1, 5);
  forced.add(2, Vocab::eos);
  forced.add(2, 7);  // a row may keep two tokens
  forced.apply(lp);
  // Exact: apply() copies the forced token's value and writes -inf; nothing is computed.
  EXPECT_TRUE(at::equal(lp[0], before[0]));  // rows not forced are untouched
  for (int64_t v = 0; v < 8; ++v) {
    EXPECT_EQ(lp[1][v].item<float>(), v == 5 ? before[1][5].item<float>() : kNegInf) << v;
    EXPECT_EQ(lp[2][v].item<float>(), v == Vocab::eos || v == 7 ? before[2][v].item<float>() : kNegInf) << v;
  }
  // A row at a time (a search that normalizes its rows one by one) gives the same rows.
  auto by_row = before.clone();
  for (int64_t r = 0; r < 3; ++r) forced.apply_to_row(by_row[r].data_ptr<float>(), r, 8);
  EXPECT_TRUE(at::equal(by_row, lp));
}

// One sentence, beam 2, vocabulary 10, the phrase (7 8): candidates that begin the phrase are kept
// though they score below plain ones, eos waits until the phrase is held, and each new
// hypothesis's state is its parent's advanced by its token.
TEST(SearchSteps, ConstraintsKeepCandidatesThatAdvanceThePhraseAndEndOnlyOnceItIsHeld) {
  TargetGuide g;
  g.constraints = {{7, 8}};
  const std::vector<Row> rows = {{0, &g}};
  ConstraintSearch c(rows, 1, 2);
  EXPECT_TRUE(c.constrained(0));
  const int64_t vocab = 10;
  // The 2k = 4 best: (hyp 0, eos), (hyp 0, 4), (hyp 1, 5), (hyp 0, 6); token 7 scores low.
  const float top[] = {-0.1f, -0.5f, -0.9f, -1.0f};
  const int64_t ids[] = {0 * vocab + Vocab::eos, 0 * vocab + 4, 1 * vocab + 5, 0 * vocab + 6};
  const std::vector<float> row_scores = {0.0f, -0.3f};
  auto score_of = [](int64_t b, int64_t tok) { return tok == 7 ? -5.0f - float(b) : -9.0f; };
  const auto chosen = c.choose(0, 0, top, ids, vocab, row_scores, false, score_of);
  ASSERT_EQ(chosen.size(), 2u);
  bool begins = false;
  for (const auto& cand : chosen) {
    EXPECT_NE(cand.token, Vocab::eos) << "an ending before the phrase is held";
    begins = begins || cand.token == 7;
  }
  EXPECT_TRUE(begins) << "the token that begins the phrase was not kept";
  // Forced steps add no wanted tokens: only the top candidates (without the early eos) remain.
  for (const auto& cand : c.choose(0, 0, top, ids, vocab, row_scores, true, score_of)) EXPECT_NE(cand.token, 7);

  c.advance({0, 1}, {7, 4}, {0, 0});
  EXPECT_EQ(c.state(0).tokens_met(g.constraints), 1);
  EXPECT_EQ(c.state(1).tokens_met(g.constraints), 0);
  c.advance({0, 0}, {8, 9}, {0, 0});
  EXPECT_TRUE(c.state(0).all_met());
  EXPECT_FALSE(c.state(1).all_met());  // 7 then 9 breaks the phrase
  const float top2[] = {-0.1f, -0.2f, -0.3f, -0.4f};
  const int64_t ids2[] = {1 * vocab + Vocab::eos, 0 * vocab + Vocab::eos, 0 * vocab + 4, 1 * vocab + 5};
  bool ended = false;
  for (const auto& cand : c.choose(0, 0, top2, ids2, vocab, row_scores, false, score_of)) {
    if (cand.token == Vocab::eos) {
      EXPECT_EQ(cand.row, 0) << "only the hypothesis that holds the phrase may end";
      ended = true;
    }
  }
  EXPECT_TRUE(ended);
  EXPECT_FALSE(ConstraintSearch({}, 1, 2).constrained(0));
}

TEST(SearchSteps, AlignmentHistoriesFollowTheirParentsAndEndWithTheLastStep) {
  const auto src = two_sources();  // 3 and 7 real positions
  AlignmentRecorder a(true, src, 2);
  auto step = [](float base) { return at::arange(14, at::kFloat).view({2, 7}).add(base); };
  a.observe(step(0));
  a.advance({1, 1}, {1, 1});  // both continue row 1 (sentence 1)
  a.observe(step(100));
  Hypothesis h;
  a.finish(h, 0, 1);
  // Exact: the recorder copies attention rows, it computes nothing from them.
  ASSERT_EQ(h.attention.size(), 2u);
  EXPECT_EQ(h.attention[0], std::vector<float>({7, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(h.attention[1], std::vector<float>({100, 101, 102, 103, 104, 105, 106}));
  Hypothesis short_one;
  AlignmentRecorder b(true, src, 2);
  b.observe(step(0));
  b.finish(short_one, 0, 0);
  ASSERT_EQ(short_one.attention.size(), 1u);
  EXPECT_EQ(short_one.attention[0], std::vector<float>({0, 1, 2}));  // sentence 0's 3 positions
  AlignmentRecorder off(false, src, 2);
  off.observe(step(0));
  Hypothesis none;
  off.finish(none, 0, 0);
  EXPECT_TRUE(none.attention.empty());
}

TEST(SearchSteps, TheSamplerDrawsOnlyFromItsSetAndRepeatsForASeedAndIndex) {
  auto lp = at::log_softmax(at::tensor({3.0f, 2.9f, 2.8f, 0.0f, -1.0f, -2.0f}).view({1, 6}), 1);
  SearchOptions o;
  o.sampling = Sampling::topk;
  o.topk = 2;
  TokenSampler topk(o);
  topk.rank(lp);
  auto rng = TokenSampler::rng_for(7, 3);
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) seen.insert(topk.draw(0, rng));
  EXPECT_EQ(seen, std::set<int64_t>({0, 1}));

  SearchOptions p;
  p.sampling = Sampling::topp;
  p.topp = 0.01;  // the smallest set holding 1%: the best token alone
  TokenSampler topp(p);
  topp.rank(lp);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(topp.draw(0, rng), 0);

  SearchOptions all;
  all.sampling = Sampling::topp;
  all.topp = 1.0;
  TokenSampler sampler(all);
  sampler.rank(lp);
  auto draws = [&](uint64_t seed, size_t index) {
    auto r = TokenSampler::rng_for(seed, index);
    std::vector<int64_t> out;
    for (int i = 0; i < 30; ++i) out.push_back(sampler.draw(0, r));
    return out;
  };
  EXPECT_EQ(draws(5, 11), draws(5, 11));
  EXPECT_NE(draws(5, 11), draws(5, 12));
  EXPECT_NE(draws(5, 11), draws(6, 11));
}
