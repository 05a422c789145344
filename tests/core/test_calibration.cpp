// Calibration of the report's significance test on simulated experiments (seed_noise_sim.h), no
// training: with no true difference between two variants it must call few comparisons
// significant; with a real one, most. The same checks on the sentence-only bootstrap (the
// method reports used before) show why it was replaced.
//
// The bounds leave room for the simulation's own noise: 400 experiments at a true rate of 5% give
// a rate within [2.9%, 7.3%] 95% of the time, so [2%, 9%] fails a miscalibrated test, not an
// unlucky draw. Every draw is fixed by the seeds below (the simulator's transforms are its own),
// so the rates are the same on every machine up to the last bits of a BLEU score.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <vector>

#include "eval/bootstrap.h"
#include "eval/significance.h"
#include "report/verdict.h"
#include "seed_noise_sim.h"

namespace yoke {
namespace {

constexpr int kExperiments = 400;
constexpr int kSentences = 300;
constexpr int kResamples = 200;

std::vector<int> seed_list(int seeds) {
  std::vector<int> s;
  for (int i = 1; i <= seeds; ++i) s.push_back(i);
  return s;
}

struct Rates {
  double new_test = 0, sentence_only = 0;
};

// Share of experiments whose 95% interval excludes 0, under each test, when B's skill is A's plus
// `effect` (0: an A/A comparison, two variants of the same model).
Rates significant_share(int seeds, double effect, uint64_t seed) {
  sim::Draws d(seed);
  const sim::Noise noise;
  const auto seeds_of = seed_list(seeds);
  int by_new = 0, by_sentences = 0;
  for (int e = 0; e < kExperiments; ++e) {
    const sim::TestSet t = sim::make_test_set(kSentences, d);
    const auto a = sim::simulate_variant(t, 1.0, seeds, noise, d);
    const auto b = sim::simulate_variant(t, 1.0 + effect, seeds, noise, d);
    const SignificanceResult r = bleu_significance(a, seeds_of, b, seeds_of);
    by_new += r.p_value < 0.05;
    const BootstrapResult s = paired_bootstrap_bleu_seeds(a, b, kResamples, uint64_t(e) + 1);
    by_sentences += s.ci_low > 0 || s.ci_high < 0;
  }
  return {double(by_new) / kExperiments, double(by_sentences) / kExperiments};
}

TEST(Calibration, NoTrueDifferenceIsSignificantAboutFivePercentOfTheTime) {
  for (int seeds : {3, 5}) {
    const Rates r = significant_share(seeds, 0.0, 2024);
    std::cout << "A/A, " << seeds << " seeds: significant " << r.new_test << " (sentence-only bootstrap "
              << r.sentence_only << ")\n";
    // The test is conservative (its df are the seed part's alone): 3.5% with 3 seeds, 1.75% with 5
    // here. The lower bound catches a test that never calls anything, not a rate a little below 5%.
    EXPECT_GE(r.new_test, 0.01) << seeds << " seeds";
    EXPECT_LE(r.new_test, 0.09) << seeds << " seeds";
    // The sentence-only bootstrap holds the seeds fixed: the seed noise, which it does not
    // resample, passes for a difference in about half of these A/A experiments.
    EXPECT_GT(r.sentence_only, 0.09) << seeds << " seeds";
  }
}

// The seed standard deviation of one variant's BLEU, and how many BLEU one unit of skill is worth,
// measured on the simulator itself so that "3 seed-SDs" means what it says.
struct Scale {
  double seed_sd = 0, bleu_per_skill = 0;
};

Scale measure_scale() {
  sim::Draws d(99);
  const sim::Noise noise;
  const sim::TestSet t = sim::make_test_set(kSentences, d);
  double sd_sum = 0, slope_sum = 0;
  constexpr int kVariants = 10, kSeeds = 20;
  for (int v = 0; v < kVariants; ++v) {
    std::vector<double> at0, at1;
    for (const auto& run : sim::simulate_variant(t, 1.0, kSeeds, noise, d)) at0.push_back(sim::corpus_score(run));
    for (const auto& run : sim::simulate_variant(t, 1.2, kSeeds, noise, d)) at1.push_back(sim::corpus_score(run));
    double m0 = 0, m1 = 0, ss = 0;
    for (double x : at0) m0 += x / kSeeds;
    for (double x : at1) m1 += x / kSeeds;
    for (double x : at0) ss += (x - m0) * (x - m0);
    sd_sum += std::sqrt(ss / (kSeeds - 1));
    slope_sum += (m1 - m0) / 0.2;
  }
  return {sd_sum / kVariants, slope_sum / kVariants};
}

TEST(Calibration, ADifferenceOfThreeSeedDeviationsIsFoundWithFiveSeeds) {
  const Scale scale = measure_scale();
  ASSERT_GT(scale.seed_sd, 0.3);  // the simulator has real seed noise (BLEU points)
  ASSERT_GT(scale.bleu_per_skill, 0.0);
  const double effect = 3.0 * scale.seed_sd / scale.bleu_per_skill;
  const Rates r = significant_share(5, effect, 7);
  std::cout << "effect " << 3.0 * scale.seed_sd << " BLEU (3 seed-SDs), 5 seeds: found " << r.new_test << "\n";
  EXPECT_GT(r.new_test, 0.80);
}

// seeds = auto 3..6 on A/A experiments: look after 3, 4, 5 and 6 seeds, each look at 0.05 / 4, and
// stop at the first decision. Over all the looks the share of experiments that decide falsely must
// stay near or below 5% (Bonferroni bounds it by 5%; the bound of the test leaves room for the
// simulation's noise, 300 experiments).
TEST(Calibration, AddingSeedsUntilDecidedKeepsTheErrorRate) {
  sim::Draws d(77);
  const sim::Noise noise;
  constexpr int kMin = 3, kMax = 6, kRuns = 300;
  const double alpha = 0.05 / (kMax - kMin + 1);
  int false_decisions = 0, looked_past_min = 0;
  for (int e = 0; e < kRuns; ++e) {
    const sim::TestSet t = sim::make_test_set(200, d);
    auto a = sim::simulate_variant(t, 1.0, kMax, noise, d), b = sim::simulate_variant(t, 1.0, kMax, noise, d);
    for (int k = kMin; k <= kMax; ++k) {
      const std::vector<std::vector<BleuStats>> ak(a.begin(), a.begin() + k), bk(b.begin(), b.begin() + k);
      const SignificanceResult r = bleu_significance(ak, seed_list(k), bk, seed_list(k));
      if (r.p_value < alpha) {
        ++false_decisions;
        break;
      }
      looked_past_min += k == kMin;
    }
  }
  const double rate = double(false_decisions) / kRuns;
  std::cout << "A/A, seeds 3..6 until decided: false decisions " << rate << "\n";
  EXPECT_LE(rate, 0.07);
  EXPECT_GT(looked_past_min, kRuns / 2);  // most experiments did look again with more seeds
}

// The whole sequential rule as the runner and the report apply it: seeds = auto 3..6, two variants
// against one baseline (m = 2 comparisons a look, each look at 0.05 / 4), verdicts read from the
// simultaneous interval (report/verdict.h), a decided variant stopped and its comparison frozen on
// the seeds it had while the baseline goes on, every comparison on the seeds both sides have. One
// variant is the baseline again (A/A), the other better by 4 seed-SDs. The A/A variant must be
// called better or worse in at most ~5% of experiments (Bonferroni bounds the family error by 5%;
// 7% leaves room for 300 experiments' noise), and the better one found in most.
TEST(Calibration, TheSequentialRuleKeepsItsErrorRateAndFindsAnEffect) {
  sim::Draws d(4242);
  const sim::Noise noise;
  const Scale scale = measure_scale();
  const double effect = 4.0 * scale.seed_sd / scale.bleu_per_skill;
  constexpr int kMin = 3, kMax = 6, kRuns = 300;
  int false_calls = 0, found = 0, unconverged_decided = 0;
  for (int e = 0; e < kRuns; ++e) {
    const sim::TestSet t = sim::make_test_set(200, d);
    const auto base = sim::simulate_variant(t, 1.0, kMax, noise, d);
    const std::vector<std::vector<std::vector<BleuStats>>> variants = {sim::simulate_variant(t, 1.0, kMax, noise, d),
                                                                       sim::simulate_variant(t, 1.0 + effect, kMax, noise, d)};
    std::vector<std::string> verdict(variants.size());
    for (int k = kMin; k <= kMax; ++k) {
      for (size_t v = 0; v < variants.size(); ++v) {
        if (!verdict[v].empty()) continue;  // decided at an earlier look: frozen
        const std::vector<std::vector<BleuStats>> a(base.begin(), base.begin() + k), b(variants[v].begin(), variants[v].begin() + k);
        const SignificanceResult r = bleu_significance(a, seed_list(k), b, seed_list(k));
        VerdictInput in;
        in.delta = r.delta;
        in.p_value = r.p_value;
        in.se = r.se;
        in.df = r.df;
        in.testable = r.testable;
        in.alpha = 0.05 / (kMax - kMin + 1);
        in.comparisons = int(variants.size());
        in.converged = false;
        unconverged_decided += decided(in);  // runs that had not converged decide nothing
        in.converged = true;
        if (decided(in) || k == kMax) verdict[v] = decide(in).verdict;
      }
    }
    false_calls += verdict[0] != "inconclusive";
    found += verdict[1] == "better";
  }
  std::cout << "seeds auto 3..6, two comparisons: A/A called " << double(false_calls) / kRuns << ", effect of "
            << 4.0 * scale.seed_sd << " BLEU found " << double(found) / kRuns << "\n";
  EXPECT_EQ(unconverged_decided, 0);
  EXPECT_LE(double(false_calls) / kRuns, 0.07);
  EXPECT_GT(double(found) / kRuns, 0.80);
}

TEST(Significance, IntervalAndTwoSidedPAgree) {
  sim::Draws d(3);
  const sim::Noise noise;
  const sim::TestSet t = sim::make_test_set(200, d);
  const auto a = sim::simulate_variant(t, 1.0, 4, noise, d), b = sim::simulate_variant(t, 1.3, 4, noise, d);
  const SignificanceResult r = bleu_significance(a, {1, 2, 3, 4}, b, {1, 2, 3, 4});
  ASSERT_TRUE(r.testable);
  EXPECT_TRUE(r.paired);
  EXPECT_GT(r.var_seed, 0.0);
  // The interval is symmetric about Δ, and p < 0.05 exactly when it excludes 0. 1e-9: the
  // same quantities through a quantile and a CDF.
  EXPECT_NEAR(r.delta - r.ci_low, r.ci_high - r.delta, 1e-9);
  const double q = t_quantile(0.975, r.df);
  EXPECT_NEAR(t_two_sided_p(q, r.df), 0.05, 1e-9);
  EXPECT_EQ(r.p_value < 0.05, r.ci_low > 0 || r.ci_high < 0);
  // B against A is the mirror of A against B.
  const SignificanceResult back = bleu_significance(b, {1, 2, 3, 4}, a, {1, 2, 3, 4});
  EXPECT_NEAR(back.delta, -r.delta, 1e-9);
  EXPECT_NEAR(back.p_value, r.p_value, 1e-9);
  EXPECT_NEAR(back.var_sentence, r.var_sentence, 1e-9);
}

TEST(Significance, SeedsAloneTestAndPairing) {
  // Paired: the per-seed Δ are 1.0, 1.2, 0.8 → mean 1, sd 0.2, SE 0.2/√3, t = 8.66 on 2 df.
  const SignificanceResult p = seed_significance({{1, 2, 3}, {30, 31, 32}}, {{1, 2, 3}, {31, 32.2, 32.8}});
  EXPECT_TRUE(p.paired);
  EXPECT_NEAR(p.delta, 1.0, 1e-12);
  EXPECT_NEAR(p.df, 2.0, 1e-12);
  EXPECT_NEAR(p.se, 0.2 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(p.p_value, 0.013072, 1e-6);  // with 2 df, p = 1 − t/√(2 + t²) = 0.0130718
  // Other seeds: Welch's test, whose SE is larger here (the seed offsets no longer cancel).
  const SignificanceResult w = seed_significance({{1, 2, 3}, {30, 31, 32}}, {{4, 5, 6}, {31, 32.2, 32.8}});
  EXPECT_FALSE(w.paired);
  EXPECT_GT(w.se, p.se);
  // t = 1.2769 on 3.970 df; p = 0.27121 by Simpson's rule over the t density (200,000 steps).
  EXPECT_NEAR(w.p_value, 0.27121, 1e-4);
  // One seed on a side: no variance, no test.
  const SignificanceResult one = seed_significance({{1}, {30}}, {{1}, {31}});
  EXPECT_FALSE(one.testable);
  EXPECT_NEAR(one.delta, 1.0, 1e-12);
}

TEST(Significance, DetectableEffectAndSeedsNeeded) {
  const SignificanceResult r = seed_significance({{1, 2, 3}, {30, 31, 32}}, {{1, 2, 3}, {30.5, 30.2, 33.0}});
  ASSERT_TRUE(r.testable);
  // (t(0.975, 2) + t(0.8, 2)) · SE, the quantiles of 2 df in closed form: (2q − 1)·√(2 / (4q(1 − q))).
  EXPECT_NEAR(r.detectable, (4.302653 + 1.060660) * r.se, 1e-4);
  // An effect the test can already detect needs no more seeds than it has; a smaller one more.
  const auto now = seeds_needed(r, r.detectable * 1.01);
  ASSERT_TRUE(now.has_value());
  EXPECT_LE(*now, 3);
  const auto more = seeds_needed(r, r.detectable / 3);
  ASSERT_TRUE(more.has_value());
  EXPECT_GT(*more, 3);
  EXPECT_FALSE(seeds_needed(r, 1e-6).has_value());  // none within 50
}

}  // namespace
}  // namespace yoke
