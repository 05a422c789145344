// Is variant B better than variant A, when each was trained with several seeds and scored on one
// test set? The test of every report and of `yoke compare`; docs/statistics.md says why it is
// built this way, with its references.
//
// Two sources of noise move the observed Δ = mean over B's seeds − mean over A's seeds:
//   seeds:     another seed, another model (Clark et al. 2011, "optimizer instability");
//   sentences: another test set from the same distribution, another Δ (Koehn 2004).
// The test estimates the variance of Δ as the sum of one component for each:
//   seed part      paired (both variants have the same seeds): s²(Δ per seed) / k, df k − 1;
//                  otherwise (Welch) s²_A / k_A + s²_B / k_B, Welch–Satterthwaite df.
//                  Each seed's score is on the whole test set, so this part holds the noise of
//                  which sentences a seed gets right as well as that of the seed itself.
//   sentence part  the variance of the seed-averaged Δ that the test set alone adds: over test
//                  sets drawn again (the same draw for every output), the mean covariance of the
//                  scores of two *different* runs (pairs within a variant, and across the
//                  variants, entering as in Var(mean B − mean A)). What two independent seeds
//                  share is the test set; a single seed's own sentence noise is already in the
//                  seed part and is not counted twice. Clamped at 0. The covariances come from
//                  eval/test_set_covariance.h without random draws (BLEU from its sentence
//                  statistics, perplexity from each sentence's NLL), so no verdict rests on a seed.
// and compares Δ / √(variance) with Student's t at the seed part's degrees of freedom (the sum's
// Satterthwaite df grows when the seed spread comes out small, just when |t| is large, which made
// the test too eager in the tails: significance.cpp). The 95% interval is Δ ± t(0.975, df) · SE
// and p is two-sided, so p < 0.05 exactly when the interval excludes 0.
//
// tests/core/test_calibration.cpp checks it on simulated experiments: with no true difference it
// calls 2–9% of comparisons significant at 5% (the sentence-only bootstrap, which leaves the seed
// part out, calls over a third), and it finds a difference of 3 seed standard deviations more
// than 80% of the time with 5 seeds.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/bleu.h"

namespace yoke {

// How the seeds of the two sides are compared. by_seed: paired (seed s of A against seed s of B)
// when both sides have the same seeds in the same order, Welch otherwise; unpaired: Welch always,
// for designs whose seed numbers couple nothing (systems of different shapes start from unrelated
// initialisations): pairing them would only halve the degrees of freedom (docs/statistics.md).
enum class Pairing { by_seed, unpaired };

struct SeededScores {
  std::vector<int> seeds;       // the seed of each run, in order
  std::vector<double> scores;   // the metric of each run on the whole test set
};

struct SignificanceResult {
  double mean_a = 0, mean_b = 0, delta = 0;  // Δ = mean_b − mean_a
  bool paired = false;            // both sides had the same seeds: Δ per seed is tested
  int seeds_a = 0, seeds_b = 0;
  bool testable = false;          // ≥ 2 seeds on each side; else only `delta` is set
  double var_seed = 0, var_sentence = 0;  // the two components of Var(Δ) (sentence: 0 when unknown)
  double run_var_a = 0, run_var_b = 0;    // s² over runs: A's and B's scores (paired: of Δ per seed, in a)
  bool sentence_part_known = false;       // per-sentence statistics were given
  double se = 0, df = 0;
  double ci_low = 0, ci_high = 0;  // 95%
  double p_value = 1;              // two-sided
  double detectable = 0;           // smallest |Δ| found with 80% power at the 5% level, at this SE
};

// From the per-run scores alone (perplexity, or a metric without per-sentence statistics): the
// seed part only, which then also stands for the test set's part as far as seeds see it.
SignificanceResult seed_significance(const SeededScores& a, const SeededScores& b, Pairing pairing = Pairing::by_seed);

// Both parts, the sentence part from cov, the covariance over test sets of every run's score
// (eval/test_set_covariance.h), A's runs first, in the order of a.seeds, then B's.
SignificanceResult two_level_significance(const SeededScores& a, const SeededScores& b,
                                          const std::vector<std::vector<double>>& cov, Pairing pairing = Pairing::by_seed);

// BLEU: runs_a[r][i] are the statistics of sentence i in run r of A (seeds as listed in seeds_a).
SignificanceResult bleu_significance(const std::vector<std::vector<BleuStats>>& runs_a, const std::vector<int>& seeds_a,
                                     const std::vector<std::vector<BleuStats>>& runs_b, const std::vector<int>& seeds_b,
                                     Pairing pairing = Pairing::by_seed);

// Perplexity: nll_a[r][i] is sentence i's summed NLL (nats) in run r of A, count[i] its tokens
// (or words, for word perplexity), the same for every run.
SignificanceResult perplexity_significance(const std::vector<std::vector<double>>& nll_a, const std::vector<int>& seeds_a,
                                           const std::vector<std::vector<double>>& nll_b, const std::vector<int>& seeds_b,
                                           const std::vector<double>& count, Pairing pairing = Pairing::by_seed);

// The smallest |Δ| found with 80% power by a two-sided test at `level` with this SE and df.
double detectable_effect(double se, double df, double level = 0.05);

// The smallest k such that a comparison with k seeds on each side (paired when r was) detects an
// effect of size |effect| with 80% power at `level`, given the per-run spreads and the sentence part
// measured in r, with the df that test would have (k − 1 paired; Welch's from the two spreads
// otherwise); nullopt when not testable, or no k ≤ max_seeds does (the sentence part alone may be
// too large: then only a larger test set helps).
std::optional<int> seeds_needed(const SignificanceResult& r, double effect, double level = 0.05, int max_seeds = 50);

// Student's t: two-sided p of a statistic, and a quantile. df may be fractional (Satterthwaite);
// df = +inf is the normal distribution.
double t_two_sided_p(double t, double df);
double t_quantile(double q, double df);

}  // namespace yoke
