// Had a run's training converged? Read from its metrics.jsonl (the trainer's "valid" and "end"
// records), by the rule the reports state (docs/statistics.md, "Convergence"):
//   converged     early stopping fired; or over the last kWindow validations the validation loss
//                 falls, with 95% confidence, by less than kMaxDecline of itself: the least-squares
//                 slope of loss against update, one-sided upper bound of the decline (t, K − 2 df),
//                 times the updates the window spans, over the window's mean loss;
//   not           otherwise, or fewer than kWindow validations.
// The loss, not BLEU: it is measured on the whole validation set and smooth, where greedy BLEU on a
// subset moves by tenths from one validation to the next and a slope's bound would never close.
// Why 5 and 0.5%: docs/statistics.md, calibrated on the committed curves and the validation loss's noise.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report/run_result.h"

namespace yoke {

constexpr int kWindow = 5;
constexpr double kMaxDecline = 0.005;

struct Plateau {
  bool converged = false;
  double decline = 0, decline_bound = 0;  // relative decline over the window: fitted, 95% upper bound
  std::string why;
};

// The slope rule on validation losses at the given updates (the last kWindow are used).
Plateau loss_plateau(const std::vector<double>& updates, const std::vector<double>& loss);

// Whether the run of this metrics.jsonl converged, and why; none when the file is missing.
std::optional<Convergence> convergence_of(const std::string& metrics_path);

}  // namespace yoke
