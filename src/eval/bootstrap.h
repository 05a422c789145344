// Paired bootstrap resampling (Koehn 2004, "Statistical Significance Tests for Machine
// Translation Evaluation") for the BLEU difference of two systems on the same test set, with
// every training seed of each system taking part.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "eval/bleu.h"

namespace yoke {

struct BootstrapResult {
  std::vector<double> bleu_a, bleu_b;  // corpus BLEU of each seed's output on the full test set
  double mean_a, mean_b;               // their means over seeds (0..100)
  double delta;                        // mean_b - mean_a: the Δ a report prints
  double ci_low, ci_high;              // 95% percentile interval of Δ over the resamples
  double p_value;                      // two-sided; see paired_bootstrap_bleu_seeds
  int samples;                         // resamples drawn
};

// Method ("seed-pooled" paired bootstrap). Each resample draws a test set of the same size as
// the original, sentences picked uniformly with replacement; the same picks serve every seed of
// both systems. On it, each seed's output gets its corpus BLEU (from precomputed sentence
// statistics) and Δ* = mean over B's seeds − mean over A's seeds. The mean over seeds, not one
// BLEU of the seeds' outputs pooled, so that Δ* at the original test set is exactly the Δ of
// the report's mean columns and the interval is an interval of that number. One seed per
// system is Koehn's original test.
//
// What it measures: how much Δ depends on which sentences the test set happens to hold, with
// the seeds held fixed. It does not resample the seeds: on simulated experiments with seed noise
// it calls about 40% of comparisons of two identical variants significant
// (tests/core/test_calibration.cpp). Reports and `yoke compare` decide with
// eval/significance.h, which counts both; this test is their second column.
//
// p is two-sided and agrees with the interval: twice the share of resamples on the smaller side of
// 0 (Δ* ≤ 0 or Δ* ≥ 0), counted as sacreBLEU counts, (c + 1) / (samples + 1), capped at 1; never 0.
// Identical systems get p = 1. The interval is the 2.5th and 97.5th percentile of Δ* (linear
// interpolation between order statistics).
//
// Deterministic for a given seed (std::mt19937_64, whose output the standard fixes).
// Throws std::invalid_argument when a system has no outputs, an output's length differs from the
// references', or samples < 1.
BootstrapResult paired_bootstrap_bleu_seeds(const std::vector<std::vector<std::string>>& hyps_a,
                                            const std::vector<std::vector<std::string>>& hyps_b,
                                            const std::vector<std::string>& refs, int samples = 1000,
                                            uint64_t seed = 12345, bool lowercase = false);

// The same on precomputed sentence statistics: stats[seed][sentence] of each system.
BootstrapResult paired_bootstrap_bleu_seeds(const std::vector<std::vector<BleuStats>>& stats_a,
                                            const std::vector<std::vector<BleuStats>>& stats_b, int samples = 1000,
                                            uint64_t seed = 12345);

// Every run's corpus BLEU on the whole test set and on each of `samples` resamples of its
// sentences (n drawn with replacement; the same resample for every run of both systems):
// a[resample][run], b[resample][run]. What both the test above and eval/significance.h resample.
struct ResampledScores {
  std::vector<double> observed_a, observed_b;
  std::vector<std::vector<double>> a, b;
};
ResampledScores resample_sentences(const std::vector<std::vector<BleuStats>>& runs_a,
                                   const std::vector<std::vector<BleuStats>>& runs_b, int samples, uint64_t seed);

// paired_bootstrap_bleu_seeds on resamples already drawn (a report draws them once for both tests).
BootstrapResult sentence_bootstrap(const ResampledScores& scores);

// One output per system: Koehn's test.
BootstrapResult paired_bootstrap_bleu(const std::vector<std::string>& hyps_a,
                                      const std::vector<std::string>& hyps_b,
                                      const std::vector<std::string>& refs, int samples = 1000,
                                      uint64_t seed = 12345, bool lowercase = false);

// The q-quantile (0 ≤ q ≤ 1) of values, linearly interpolated between order statistics (the
// default of R and numpy). Throws std::invalid_argument when values is empty.
double quantile(std::vector<double> values, double q);

}  // namespace yoke
