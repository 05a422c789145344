#include "analysis/gradient_shares.h"

#include <algorithm>

#include "util/json_file.h"

namespace yoke {

std::vector<std::pair<double, double>> read_gradient_shares(const std::string& metrics_path) {
  std::vector<std::pair<double, double>> out;
  for (const auto& j : read_json_lines(metrics_path, "grad_paths"))
    out.emplace_back(j.at("update").get<double>(), j.at("share_output").get<double>());
  return out;
}

std::optional<GradientShareSummary> summarize_gradient_shares(const std::vector<std::pair<double, double>>& shares) {
  if (shares.empty()) return std::nullopt;
  const size_t n = shares.size(), tenth = std::max<size_t>(1, n / 10);
  auto mean = [&](size_t from, size_t to) {
    double s = 0;
    for (size_t i = from; i < to; ++i) s += shares[i].second;
    return s / double(to - from);
  };
  return GradientShareSummary{mean(0, tenth), mean(n - tenth, n)};
}

}  // namespace yoke
