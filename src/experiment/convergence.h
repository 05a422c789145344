// Had a run's training converged? Read from its metrics.jsonl (the trainer's "valid" and "end"
// records), by the rule the reports state:
//   converged     early stopping fired, or the last three validations lie within 0.5 BLEU of each
//                 other (within 1% of the last validation loss where validation has no BLEU);
//   not           otherwise, or fewer than three validations.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace yoke {

constexpr double kPlateauBleu = 0.5;
constexpr double kPlateauLossShare = 0.01;

// {converged: bool, why: "..."}; null when the file is missing.
nlohmann::json convergence_of(const std::string& metrics_path);

}  // namespace yoke
