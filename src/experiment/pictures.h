// The pictures of an experiment report, drawn from the finished runs: validation curves,
// scores per variant with their spread over seeds, and each variant's analysis pictures.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "report/report.h"

namespace yoke {

// Writes SVG (and PNG where a converter exists) into out_dir; returns (caption, path relative
// to out_dir) for the report page.
std::vector<std::pair<std::string, std::string>> draw_experiment_pictures(const ReportInput& runs,
                                                                          const std::string& out_dir);

// The share of the embedding gradient that came through the output projection, per update, from
// a run's metrics.jsonl (training with log_grad_paths = true). Returns false, writing nothing,
// when the file has no such lines.
bool draw_gradient_paths(const std::string& metrics_path, const std::string& svg_path);

}  // namespace yoke
