// report/verdict.h: the rule that turns a comparison into a verdict, with one adjustment for every
// claim it makes, and the power numbers at the level it tests.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/significance.h"
#include "report/verdict.h"

namespace yoke {
namespace {

VerdictInput comparison(double delta, double se, double df, int comparisons) {
  VerdictInput v;
  v.delta = delta;
  v.se = se;
  v.df = df;
  v.p_value = t_two_sided_p(delta / se, df);
  v.testable = true;
  v.converged = true;
  v.comparisons = comparisons;
  return v;
}

TEST(Verdict, TheIntervalIsSimultaneousOverTheComparisons) {
  const VerdictInput one = comparison(1.0, 0.4, 4, 1), four = comparison(1.0, 0.4, 4, 4);
  const VerdictInterval i1 = verdict_interval(one), i4 = verdict_interval(four);
  EXPECT_NEAR(i1.level, 0.95, 1e-15);
  EXPECT_NEAR(i4.level, 1 - 0.05 / 4, 1e-15);
  // t(0.975, 4) = 2.776445 and t(0.99375, 4) = 4.314660 (the t density integrated by the trapezoid rule).
  EXPECT_NEAR(i1.high - 1.0, 2.776445 * 0.4, 1e-5);
  EXPECT_NEAR(i4.high - 1.0, 4.314660 * 0.4, 1e-5);
  EXPECT_NEAR(i4.p_adjusted, std::min(1.0, 4 * four.p_value), 1e-15);
  // Δ / SE = 2.5 on 4 df: p = 0.0668. Alone, its 95% interval [−0.11, 2.11] holds 0; so do the 98.75% ones.
  EXPECT_EQ(decide(one).verdict, "inconclusive");
  // At Δ / SE = 5 (p = 0.0075): alone it is decided; one of four comparisons needs p < 0.0125, met.
  const VerdictInput strong1 = comparison(2.0, 0.4, 4, 1), strong4 = comparison(2.0, 0.4, 4, 4);
  EXPECT_EQ(decide(strong1).verdict, "better");
  EXPECT_EQ(decide(strong4).verdict, "better");
  // Δ / SE = 3.5 (p = 0.0249): below 0.05 alone, not below 0.0125 with four comparisons; the
  // verdict and the printed interval agree in both cases.
  const VerdictInput mid1 = comparison(1.4, 0.4, 4, 1), mid4 = comparison(1.4, 0.4, 4, 4);
  EXPECT_EQ(decide(mid1).verdict, "better");
  EXPECT_GT(verdict_interval(mid1).low, 0.0);
  EXPECT_EQ(decide(mid4).verdict, "inconclusive");
  EXPECT_LT(verdict_interval(mid4).low, 0.0);
}

TEST(Verdict, OnlyAnEffectOfTheOppositeSignContradictsWithoutARegisteredMargin) {
  // The seed's +1.0 against a Δ of −0.5 with SE 0.3 on 9 df, two comparisons: the 97.5% interval
  // [−0.5 ∓ 2.685 · 0.3] = [−1.31, +0.31] holds 0 and excludes +1.0. A smaller effect than the
  // seed's is no contradiction without a margin fixed before the runs: inconclusive, and said so.
  VerdictInput v = comparison(-0.5, 0.3, 9, 2);
  v.expected = 1.0;
  const VerdictInterval i = verdict_interval(v);
  EXPECT_LT(i.low, 0.0);
  EXPECT_GT(i.high, 0.0);
  EXPECT_LT(i.high, 1.0);
  Verdict d = decide(v);
  EXPECT_EQ(d.verdict, "inconclusive");
  EXPECT_NE(d.why.find("excludes the seed's +1.00"), std::string::npos) << d.why;
  EXPECT_NE(d.why.find("margin registered"), std::string::npos) << d.why;
  EXPECT_FALSE(decided(v));
  // Δ −1.5 with the same SE: [−2.31, −0.69] lies on the other side of 0: contradicted, and decided.
  v = comparison(-1.5, 0.3, 9, 2);
  v.expected = 1.0;
  ASSERT_LT(verdict_interval(v).high, 0.0);
  EXPECT_EQ(decide(v).verdict, "contradicted");
  EXPECT_TRUE(decided(v));
  // An expected effect inside the interval: neither claim is made.
  v = comparison(-0.5, 0.3, 9, 2);
  v.expected = 0.2;
  EXPECT_EQ(decide(v).verdict, "inconclusive");
  EXPECT_FALSE(decided(v));
}

TEST(Verdict, AnEffectBeyondTheSeedsInItsDirectionIsReproducedAndSaysLarger) {
  // Δ +2.5, SE 0.5, 4 df, one comparison: the 95% interval [+1.11, +3.89] excludes 0 and the seed's
  // +0.44 from above; the direction is the seed's, so reproduced, and the reason says "larger".
  VerdictInput v = comparison(2.5, 0.5, 4, 1);
  v.expected = 0.44;
  ASSERT_GT(verdict_interval(v).low, 0.44);
  Verdict d = decide(v);
  EXPECT_EQ(d.verdict, "reproduced");
  EXPECT_NE(d.why.find("larger than the seed's"), std::string::npos) << d.why;
  // The same interval short of a seed's +5: smaller.
  v.expected = 5.0;
  ASSERT_LT(verdict_interval(v).high, 5.0);
  d = decide(v);
  EXPECT_EQ(d.verdict, "reproduced");
  EXPECT_NE(d.why.find("smaller than the seed's"), std::string::npos) << d.why;
}

TEST(Verdict, UnconvergedRunsDecideNothing) {
  VerdictInput v = comparison(2.0, 0.4, 4, 1);
  v.converged = false;
  EXPECT_EQ(decide(v).verdict, "inconclusive");
  EXPECT_FALSE(decided(v));  // seeds = auto goes on adding seeds
  v.converged = true;
  EXPECT_TRUE(decided(v));
}

TEST(Verdict, PowerIsAtTheLevelTestedWithTheDfTested) {
  // The detectable effect grows as the level shrinks.
  EXPECT_GT(detectable_effect(1.0, 4, 0.0125), detectable_effect(1.0, 4, 0.05));
  EXPECT_NEAR(detectable_effect(1.0, 1e9, 0.05), 1.959964 + 0.841621, 1e-5);  // normal quantiles
  // Unpaired with one noisy side: Welch's df with k seeds, (k − 1)(σ²_A + σ²_B)² / (σ⁴_A + σ⁴_B),
  // is near k − 1, not 2k − 2, so more seeds are needed than the pooled df would say.
  SignificanceResult r;
  r.testable = true;
  r.paired = false;
  r.run_var_a = 1.0;
  r.run_var_b = 0.0;
  const auto k = seeds_needed(r, 2.0, 0.05);
  ASSERT_TRUE(k.has_value());
  // By hand: k = 5 gives df 4, SE √(1/5) = 0.447, detectable (2.776 + 0.941) · 0.447 = 1.66 ≤ 2;
  // k = 4 gives df 3, SE 0.5, (3.182 + 0.978) · 0.5 = 2.08 > 2.
  EXPECT_EQ(*k, 5);
  // At a quarter of the level, more.
  EXPECT_GT(*seeds_needed(r, 2.0, 0.0125), 5);
}

}  // namespace
}  // namespace yoke
