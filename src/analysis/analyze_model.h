// `yoke analyze`: every measurement on a trained model's word matrices, written as files
// (what `yoke analyze` writes):
//   norms.svg/.png   histogram of ‖w_i‖, one sample per distinct matrix (Liu, Zhai & Chen 2020, fig. 2)
//   pca.svg/.png     source and target rows on their top-2 principal components (Liu et al. 2019, fig. 6)
//   analysis.json    identity, normality, tying gap, norm statistics, estimator, tie, pictures, and
//                    with hypotheses and references the norm against over-prediction (analysis/norm_prediction.h)
// PNGs are written only when an SVG converter is installed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/model_store.h"

namespace yoke {

struct AnalyzeOptions {
  int64_t random_probes = 1000;  // random unit h for the normality maximum
  uint64_t seed = 1;             // of those probes
  int labelled_words = 15;       // PCA labels: the first word ids, a proxy for frequent words
  int64_t max_points = 2000;     // PCA points per side (lowest word ids), to keep the SVG small
  int histogram_bins = 40;
  // Translations of a test set and its references (one line each, raw text): when given,
  // analysis.json's norm_vs_prediction correlates output-row norms with over-prediction.
  std::vector<std::string> hyp_lines, ref_lines;
};

// Writes the files into `out_dir` (created if missing) and returns what analysis.json holds.
nlohmann::json analyze_model(const LoadedModel& model, const std::string& out_dir,
                             const AnalyzeOptions& options = {});

}  // namespace yoke
