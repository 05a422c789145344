// Paired bootstrap resampling (Koehn 2004, "Statistical Significance Tests for Machine
// Translation Evaluation") for the BLEU difference of two systems on the same test set, with
// every training seed of each system taking part.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

struct BootstrapResult {
  std::vector<double> bleu_a, bleu_b;  // corpus BLEU of each seed's output on the full test set
  double mean_a, mean_b;               // their means over seeds (0..100)
  double delta;                        // mean_b - mean_a: the Δ a report prints
  double ci_low, ci_high;              // 95% percentile interval of Δ over the resamples
  double p_value;                      // see paired_bootstrap_bleu_seeds
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
// seed noise averaged over the seeds given (not resampled: with three seeds a resample of
// seeds says little); reports print the per-seed Δ beside it.
//
// Convention: p_value = (#resamples with Δ* < 0 + ½ · #resamples with Δ* = 0) / samples, i.e.
// how often the claim "B is better than A" fails. Near 0 when B is clearly better, 0.5 for
// identical systems (every resample ties), near 1 when A is clearly better; for "A better than
// B" use 1 − p_value. The interval is the 2.5th and 97.5th percentile of Δ* (linear
// interpolation between order statistics).
//
// Deterministic for a given seed (std::mt19937_64, whose output the standard fixes).
// Throws std::invalid_argument when a system has no outputs, an output's length differs from the
// references', or samples < 1.
BootstrapResult paired_bootstrap_bleu_seeds(const std::vector<std::vector<std::string>>& hyps_a,
                                            const std::vector<std::vector<std::string>>& hyps_b,
                                            const std::vector<std::string>& refs, int samples = 1000,
                                            uint64_t seed = 12345, bool lowercase = false);

// One output per system: Koehn's test.
BootstrapResult paired_bootstrap_bleu(const std::vector<std::string>& hyps_a,
                                      const std::vector<std::string>& hyps_b,
                                      const std::vector<std::string>& refs, int samples = 1000,
                                      uint64_t seed = 12345, bool lowercase = false);

// The q-quantile (0 ≤ q ≤ 1) of values, linearly interpolated between order statistics (the
// default of R and numpy). Throws std::invalid_argument when values is empty.
double quantile(std::vector<double> values, double q);

}  // namespace yoke
