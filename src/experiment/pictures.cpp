#include "experiment/pictures.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "analysis/gradient_shares.h"
#include "report/svg_chart.h"
#include "report/svg_to_png.h"
#include "util/atomic_file.h"
#include "util/json_file.h"
#include "store/model_files.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

// Validation curve of one run from its metrics.jsonl: BLEU where measured, else loss.
Series validation_curve(const fs::path& metrics, const std::string& name, bool& bleu) {
  Series s{name, {}, {}};
  std::vector<std::pair<double, double>> b, l;
  for (const auto& j : read_json_lines(metrics.string(), "valid")) {
    const double u = j.at("update").get<double>();
    if (j.contains("bleu") && j.at("bleu").is_number()) b.emplace_back(u, j.at("bleu").get<double>());
    if (j.contains("loss") && j.at("loss").is_number()) l.emplace_back(u, j.at("loss").get<double>());
  }
  bleu = !b.empty();
  for (auto [x, y] : bleu ? b : l) { s.x.push_back(x); s.y.push_back(y); }
  return s;
}

void save(const fs::path& svg_path, const std::string& svg) {
  write_file_atomically(svg_path.string(), svg);
  auto png = svg_path;
  svg_to_png(svg_path.string(), png.replace_extension(".png").string());
}

}  // namespace

bool draw_gradient_paths(const std::string& metrics_path, const std::string& svg_path) {
  Series output{"through the output projection (path B)", {}, {}}, input{"through the input lookups (path A)", {}, {}};
  for (const auto& [update, share] : read_gradient_shares(metrics_path)) {
    output.x.push_back(update);
    output.y.push_back(100 * share);
    input.x.push_back(update);
    input.y.push_back(100 * (1 - share));
  }
  if (output.x.empty()) return false;
  save(svg_path, line_chart({output, input}, {"where the gradient of the word matrices comes from", "update",
                                              "% of ‖∂L/∂W‖² (path A² + path B²)"}));
  return true;
}

std::vector<std::pair<std::string, std::string>> draw_experiment_pictures(const ReportInput& in,
                                                                          const std::string& out_dir) {
  std::vector<std::pair<std::string, std::string>> pictures;
  const fs::path out(out_dir);
  // One run per variant (its smallest seed) for the curves and the analysis pictures.
  std::map<std::string, const RunResult*> first;
  for (const auto& r : in.runs)
    if (!first.count(r.variant) || r.seed < first[r.variant]->seed) first[r.variant] = &r;
  auto dir_of = [&](const RunResult& r) { return out / "runs" / r.variant / ("seed" + std::to_string(r.seed)); };

  std::vector<Series> curves;
  bool bleu = false;
  for (const auto& v : in.variant_order)
    if (first.count(v)) curves.push_back(validation_curve(dir_of(*first[v]) / "model" / kMetricsLog, v, bleu));
  const std::string curve_metric = bleu ? "validation BLEU (greedy)" : "validation loss (bits/token)";
  save(out / "curves.svg", line_chart(curves, {curve_metric + " during training", "update", curve_metric}));
  pictures.emplace_back(curve_metric + " per update, first seed of each variant", "curves.svg");

  // Where the word matrices' gradient came from, when training logged it (log_grad_paths):
  // every variant on one chart, so tied and untied, or each α, compare at a glance.
  std::vector<Series> shares;
  for (const auto& v : in.variant_order) {
    if (!first.count(v)) continue;
    Series s{v, {}, {}};
    for (const auto& [update, share] : read_gradient_shares((dir_of(*first[v]) / "model" / kMetricsLog).string())) {
      s.x.push_back(update);
      s.y.push_back(100 * share);
    }
    if (!s.x.empty()) shares.push_back(std::move(s));
  }
  if (!shares.empty()) {
    save(out / "grad_share.svg", line_chart(shares, {"share of the word matrices' gradient through the output projection",
                                                     "update", "% of \xE2\x80\x96\xE2\x88\x82L/\xE2\x88\x82W\xE2\x80\x96\xC2\xB2 (path B)"}));
    pictures.emplace_back("share of \xE2\x80\x96\xE2\x88\x82L/\xE2\x88\x82W\xE2\x80\x96\xC2\xB2 through the output projection (path B) per update, first seed of each variant "
                          "(seed 004 \xC2\xA7" "4.5: about 70% early in training)", "grad_share.svg");
  }

  // Scores: mean ± std over seeds, one group of bars per variant, one bar per test set.
  std::vector<std::string> variants;
  std::map<std::string, std::map<std::string, std::vector<double>>> values;  // test → variant → per seed
  for (const auto& v : in.variant_order) if (first.count(v)) variants.push_back(v);
  const std::string metric = in.metric;
  for (const auto& r : in.runs)
    for (const auto& [test, t] : r.tests)
      if (const auto v = r.score(test, metric)) values[test][r.variant].push_back(*v);
  std::vector<Series> bars;
  std::vector<std::vector<double>> errors;
  for (const auto& [test, per_variant] : values) {
    Series s{test, {}, {}};
    std::vector<double> err;
    for (const auto& v : variants) {
      const auto& xs = per_variant.count(v) ? per_variant.at(v) : std::vector<double>{};
      double mean = 0, var = 0;
      for (double x : xs) mean += x / double(xs.size());
      for (double x : xs) var += (x - mean) * (x - mean) / double(std::max<size_t>(1, xs.size() - 1));
      s.y.push_back(xs.empty() ? NAN : mean);
      err.push_back(xs.size() > 1 ? std::sqrt(var) : 0.0);
    }
    bars.push_back(s);
    errors.push_back(err);
  }
  if (!bars.empty()) {
    const std::string name = metric_name(metric);
    save(out / "scores.svg", bar_chart(variants, bars, {"test " + name + " per variant", "", name}, &errors));
    pictures.emplace_back("test " + name + " per variant (mean ± std over seeds)", "scores.svg");
  }

  // Each variant's analysis pictures, where `analyze` made them.
  for (const auto& v : variants) {
    const auto rel = fs::path("runs") / v / ("seed" + std::to_string(first[v]->seed)) / "analysis";
    for (auto [file, what] : {std::pair<const char*, const char*>{"norms.svg", "norms of the embedding rows"},
                              {"pca.svg", "source and target embeddings, first two principal components"},
                              {"grad_paths.svg", "share of the embedding gradient through the input lookup"}})
      if (fs::exists(out / rel / file)) pictures.emplace_back(v + ": " + what, (rel / file).string());
  }
  return pictures;
}

}  // namespace yoke
