#include "experiment/convergence.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "util/json_file.h"

namespace yoke {

nlohmann::json convergence_of(const std::string& metrics_path) {
  if (!std::filesystem::exists(metrics_path)) return nullptr;
  std::string reason;
  for (const auto& end : read_json_lines(metrics_path, "end")) reason = end.value("reason", "");
  if (reason == "early stopping") return {{"converged", true}, {"why", "early stopping fired"}};
  std::vector<double> bleu, loss;
  for (const auto& v : read_json_lines(metrics_path, "valid")) {
    if (v.contains("bleu") && v["bleu"].is_number()) bleu.push_back(v["bleu"].get<double>());
    if (v.contains("loss") && v["loss"].is_number()) loss.push_back(v["loss"].get<double>());
  }
  const bool by_bleu = bleu.size() >= 3;
  const std::vector<double>& seen = by_bleu ? bleu : loss;
  if (seen.size() < 3)
    return {{"converged", false}, {"why", std::to_string(seen.size()) + " validation" + (seen.size() == 1 ? "" : "s") +
                                              ", fewer than the 3 a plateau needs"}};
  const auto last = std::vector<double>(seen.end() - 3, seen.end());
  const double spread = *std::max_element(last.begin(), last.end()) - *std::min_element(last.begin(), last.end());
  const double tolerance = by_bleu ? kPlateauBleu : kPlateauLossShare * last.back();
  char why[160];
  std::snprintf(why, sizeof why, "last 3 validations within %.2f %s (tolerance %.2f)", spread,
                by_bleu ? "BLEU" : "loss", tolerance);
  return {{"converged", spread <= tolerance}, {"why", why}};
}

}  // namespace yoke
