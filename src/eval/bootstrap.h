// Paired bootstrap resampling (Koehn 2004, "Statistical Significance Tests for Machine
// Translation Evaluation") for the BLEU difference of two systems on the same test set.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

struct BootstrapResult {
  double bleu_a, bleu_b;  // corpus BLEU of each system on the full test set (0..100)
  double delta;           // bleu_b - bleu_a
  double p_value;         // see paired_bootstrap_bleu
  int samples;            // resamples drawn
};

// Draws `samples` test sets of the same size as the original, sentences picked uniformly with
// replacement (the same picks for both systems), and computes corpus BLEU of A and of B on each
// from precomputed sentence statistics.
//
// Convention: p_value = (#resamples where BLEU(B) < BLEU(A) + ½ · #resamples where they tie)
// / samples, i.e. how often the claim "B is better than A" fails. It is near 0 when B is
// clearly better, 0.5 for identical systems (every resample ties), near 1 when A is clearly
// better. For "A better than B", use 1 - p_value.
//
// Deterministic for a given seed (std::mt19937_64, whose output the standard fixes).
// Throws std::invalid_argument when the three lists differ in length or samples < 1.
BootstrapResult paired_bootstrap_bleu(const std::vector<std::string>& hyps_a,
                                      const std::vector<std::string>& hyps_b,
                                      const std::vector<std::string>& refs, int samples = 1000,
                                      uint64_t seed = 12345, bool lowercase = false);

}  // namespace yoke
