// What `yoke analyze` measures on a model's word matrices (analysis/analyze_model.h computes it),
// as fields: the command's summary and the experiment runner read these, and to_json is the one
// place that names them in analysis.json. NaN is "no value" (null in the JSON, "n/a" printed).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/matrix_resemblance.h"
#include "analysis/norm_prediction.h"
#include "analysis/properties.h"
#include "analysis/sphere_uniformity.h"

namespace yoke {

// --against: the tied matrix against an untied model's input and output matrices.
struct AgainstModel {
  std::string model;       // as named on the command line (or its checkpoint file)
  std::string checkpoint;  // the file read
  std::string tie;         // the untied model's tie setting
  Resemblance resemblance;
};

struct ModelAnalysis {
  std::string estimator, tie;
  double identity = NAN;             // share of words k with argmax ℓ(w_k) = k
  double normality_max_logit = NAN;  // largest ℓ for a unit h
  std::optional<double> tying_gap;   // mean cos(e_j, u_j); none when target and output are one matrix
  std::optional<NormPrediction> norm_vs_prediction;  // with --hyp and --ref
  std::map<std::string, NormStats> norms;     // per distinct matrix, by name
  std::map<std::string, SphereStats> sphere;  // per distinct matrix, by name
  std::optional<AgainstModel> against;
  std::vector<std::string> pictures;  // file names written beside analysis.json
};

// analysis.json's object.
nlohmann::json to_json(const ModelAnalysis& a);

}  // namespace yoke
