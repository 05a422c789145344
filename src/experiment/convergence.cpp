#include "experiment/convergence.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "eval/significance.h"
#include "util/json_file.h"

namespace yoke {

Plateau loss_plateau(const std::vector<double>& updates, const std::vector<double>& loss) {
  Plateau p;
  const size_t n = loss.size();
  if (n < size_t(kWindow) || updates.size() != n) {
    p.why = std::to_string(n) + " validation" + (n == 1 ? "" : "s") + ", fewer than the " + std::to_string(kWindow) +
            " the slope rule needs";
    return p;
  }
  const size_t k = size_t(kWindow), from = n - k;
  double mx = 0, my = 0;
  for (size_t i = from; i < n; ++i) mx += updates[i] / double(k), my += loss[i] / double(k);
  double sxx = 0, sxy = 0;
  for (size_t i = from; i < n; ++i) {
    sxx += (updates[i] - mx) * (updates[i] - mx);
    sxy += (updates[i] - mx) * (loss[i] - my);
  }
  const double span = updates[n - 1] - updates[from];
  if (!(sxx > 0) || !(my > 0)) {
    p.why = "the last validations share one update or have no positive loss";
    return p;
  }
  const double slope = sxy / sxx;
  double rss = 0;
  for (size_t i = from; i < n; ++i) {
    const double r = loss[i] - (my + slope * (updates[i] - mx));
    rss += r * r;
  }
  const double df = double(k) - 2.0, se = std::sqrt(rss / df / sxx);
  p.decline = -slope * span / my;
  p.decline_bound = (-slope + t_quantile(0.95, df) * se) * span / my;
  p.converged = p.decline_bound <= kMaxDecline;
  char why[200];
  std::snprintf(why, sizeof why, "loss %s %.2f%% over the last %d validations (95%% bound %.2f%%, rule %.1f%%)",
                p.decline >= 0 ? "falls" : "rises", 100.0 * std::fabs(p.decline), kWindow, 100.0 * p.decline_bound,
                100.0 * kMaxDecline);
  p.why = why;
  return p;
}

std::optional<Convergence> convergence_of(const std::string& metrics_path) {
  if (!std::filesystem::exists(metrics_path)) return std::nullopt;
  std::string reason;
  for (const auto& end : read_json_lines(metrics_path, "end")) reason = end.value("reason", "");
  if (reason == "early stopping") return Convergence{true, "early stopping fired"};
  std::vector<double> updates, loss;
  for (const auto& v : read_json_lines(metrics_path, "valid"))
    if (v.contains("loss") && v["loss"].is_number() && v.contains("update") && v["update"].is_number()) {
      updates.push_back(v["update"].get<double>());
      loss.push_back(v["loss"].get<double>());
    }
  const Plateau p = loss_plateau(updates, loss);
  return Convergence{p.converged, p.why};
}

}  // namespace yoke
