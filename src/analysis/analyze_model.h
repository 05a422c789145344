// `yoke analyze`: every measurement on a trained model's word matrices, written as files
// (what `yoke analyze` writes):
//   norms.svg/.png   histogram of ‖w_i‖, one sample per distinct matrix (Liu, Zhai & Chen 2020, fig. 2)
//   pca.svg/.png     source and target rows on their top-2 principal components (Liu et al. 2019, fig. 6)
//   analysis.json    identity, normality, tying gap, norm statistics, estimator, tie, pictures,
//                    how far each matrix's unit rows are from uniform on the sphere (analysis/sphere_uniformity.h),
//                    with hypotheses and references the norm against over-prediction (analysis/norm_prediction.h),
//                    and with an untied model to compare against, how the tied matrix resembles its
//                    input and output matrices (analysis/matrix_resemblance.h)
// PNGs are written only when an SVG converter is installed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model_analysis.h"
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
  // Random distinct word pairs (from `seed`) for the sphere's pair cosines and the --against
  // Spearman correlations; every pair when there are fewer.
  int64_t pairs = 200000;
  int64_t knn_words = 1000;  // --against: query words of the nearest-neighbour overlap
  // An untied model of the same vocabulary and task: analysis.json's "against" compares the
  // tied model's target-side matrix with its input and output matrices. The paths name the two
  // models in messages and in analysis.json (the checkpoint file when empty).
  const LoadedModel* against = nullptr;
  std::string model_path, against_path;
};

// Writes the files into `out_dir` (created if missing) and returns what analysis.json holds
// (to_json of the result). With `against`, an InputError before anything is written when the two
// models cannot be compared (check_resemblance_pair).
ModelAnalysis analyze_model(const LoadedModel& model, const std::string& out_dir,
                             const AnalyzeOptions& options = {});

}  // namespace yoke
