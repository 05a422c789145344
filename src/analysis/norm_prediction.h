// Seed 001 §2.2's mechanism, measured: under the dot estimator a token's logit grows with the norm
// of its output row, so tokens with large rows are predicted more often than the references use
// them; a normalized estimator (l2, cosine) removes the norm from the logit. For every word that
// occurs in the hypotheses or the references: the stored row norm ‖u_i‖, its count in each, and
// Spearman's rank correlation of the norm with
//   over-prediction  log((hyp_i + 1) / (ref_i + 1))
//   reference frequency  ref_i (the confound: frequent words also get large rows)
// Special ids (pad, unk, bos, eos) are left out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "text/vocab.h"

namespace yoke {

struct NormPrediction {
  int64_t words = 0;                 // distinct words counted (in hypotheses or references)
  double spearman_overprediction = 0;
  double spearman_reference_frequency = 0;
  double spearman_hypothesis_frequency = 0;
};

// row_norms[i] = ‖u_i‖ for every id; counts indexed by id (the same length).
NormPrediction norm_vs_prediction(const std::vector<double>& row_norms, const std::vector<int64_t>& hyp_counts,
                                  const std::vector<int64_t>& ref_counts);

// Subword-id counts of text lines under `vocab` (length vocab.size()).
std::vector<int64_t> subword_counts(const Vocab& vocab, const std::vector<std::string>& lines);

// Spearman's ρ: Pearson's correlation of the ranks, ties given their mean rank. NaN when either
// side is constant or there are fewer than two values.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace yoke
