// The gradient-path shares a training run logged (log_grad_paths = true): per update, the share
// of ‖∂L/∂W‖² of the word matrices that came through the output projection (path B) rather than
// the input lookups (path A), as seed 004 §4.5 discusses (Iyer et al. 2025: about 70% early in
// training).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yoke {

// (update, share_output) from a run's metrics.jsonl, in file order; empty when the run logged none.
std::vector<std::pair<double, double>> read_gradient_shares(const std::string& metrics_path);

struct GradientShareSummary {
  double early = 0, late = 0;  // mean share over the first and the last 10% of the logged updates
};

// Over at least one update each; nullopt when the run logged none.
std::optional<GradientShareSummary> summarize_gradient_shares(const std::vector<std::pair<double, double>>& shares);

}  // namespace yoke
