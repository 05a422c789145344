#include "analysis/analyze_model.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "analysis/matrix_resemblance.h"
#include "analysis/norm_prediction.h"
#include "analysis/pca.h"
#include "analysis/properties.h"
#include "analysis/sphere_uniformity.h"
#include "report/svg_chart.h"
#include "report/svg_to_png.h"
#include "util/atomic_file.h"
#include "util/json_file.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

// Writes <stem>.svg and, when a converter exists, <stem>.png; returns the names written.
std::vector<std::string> write_picture(const fs::path& dir, const std::string& stem, const std::string& svg) {
  const std::string svg_name = stem + ".svg", png_name = stem + ".png";
  write_file_atomically((dir / svg_name).string(), svg);
  std::vector<std::string> written = {svg_name};
  if (svg_to_png((dir / svg_name).string(), (dir / png_name).string())) written.push_back(png_name);
  return written;
}

// One side of the PCA picture: a matrix's word rows and the vocabulary that names them.
struct Side {
  std::string group;
  at::Tensor rows;  // word rows only (specials left out)
  const Vocab* vocab;
};

std::string pca_picture(const std::vector<Side>& sides, const AnalyzeOptions& o) {
  std::vector<at::Tensor> parts;
  for (const auto& s : sides) parts.push_back(s.rows);
  // Fitted on every word row, drawn for the lowest ids only.
  const Pca2d pca = pca_2d(parts);
  std::vector<LabelledPoint> points;
  for (size_t s = 0; s < sides.size(); ++s) {
    const auto xy = pca.projected[s].contiguous();
    const int64_t n = std::min(xy.size(0), o.max_points);
    const double* p = xy.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) {
      const int id = int(kFirstWordId + i);
      std::string label = i < o.labelled_words ? sides[s].vocab->piece(id) : "";
      points.push_back({p[2 * i], p[2 * i + 1], sides[s].group, std::move(label)});
    }
  }
  PlotOptions plot;
  plot.title = sides.size() > 1 ? "Source and target embeddings, top-2 principal components" : "Target embeddings, top-2 principal components";
  char axis[64];
  std::snprintf(axis, sizeof axis, "PC1 (%.1f%% of variance)", 100 * pca.explained[0]);
  plot.x_label = axis;
  std::snprintf(axis, sizeof axis, "PC2 (%.1f%% of variance)", 100 * pca.explained[1]);
  plot.y_label = axis;
  plot.height = 560;
  return scatter(points, plot);
}

nlohmann::json number_or_null(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

nlohmann::json sphere_json(const SphereStats& s) {
  auto num = number_or_null;
  return {{"rows", s.rows},
          {"zero_rows", s.zero_rows},
          {"dim", s.dim},
          {"mean_resultant_length", {{"value", num(s.mean_resultant_length)},
                                     {"uniform_expected", num(s.mean_resultant_length_uniform)}}},
          {"pair_cosine", {{"pairs", s.pairs},
                           {"all_pairs", s.all_pairs},
                           {"mean", num(s.cosine_mean)},
                           {"std", num(s.cosine_std)},
                           {"uniform_expected_mean", num(s.cosine_mean_uniform)},
                           {"uniform_expected_std", num(s.cosine_std_uniform)}}},
          {"top_pc_share", {{"value", num(s.top_pc_share)}, {"uniform_expected", num(s.top_pc_share_uniform)}}},
          {"participation_ratio", {{"value", num(s.participation_ratio)},
                                   {"uniform_expected", num(s.participation_ratio_uniform)}}}};
}

// Rows kFirstWordId.. of a matrix, detached.
at::Tensor word_rows(const WordMatrix& w) { return w.full().detach().slice(0, kFirstWordId); }

}  // namespace

nlohmann::json analyze_model(const LoadedModel& m, const std::string& out_dir, const AnalyzeOptions& o) {
  at::NoGradGuard no_grad;
  const WordEmbeddings& emb = *m.model->embeddings;
  if (o.against)
    check_resemblance_pair(compared_model(m, o.model_path.empty() ? m.checkpoint : o.model_path),
                           compared_model(*o.against, o.against_path.empty() ? o.against->checkpoint : o.against_path));
  const fs::path dir(out_dir);
  fs::create_directories(dir);
  nlohmann::json j;
  j["estimator"] = name_of(emb.spec().output);
  j["tie"] = name_of(emb.spec().tie);
  j["identity"] = identity_fraction(emb.spec().output, emb.output());
  j["normality_max_logit"] = normality_max_logit(emb.spec().output, emb.output(), o.random_probes, o.seed);
  const auto gap = tying_gap(emb);
  j["tying_gap"] = gap ? nlohmann::json(*gap) : nlohmann::json(nullptr);

  if (!o.hyp_lines.empty() || !o.ref_lines.empty()) {
    const auto norms_t = emb.output().row_norms().detach().to(at::kDouble).contiguous();
    const std::vector<double> norms(norms_t.data_ptr<double>(), norms_t.data_ptr<double>() + norms_t.numel());
    const NormPrediction p = norm_vs_prediction(norms, subword_counts(m.tgt_vocab, o.hyp_lines),
                                                subword_counts(m.tgt_vocab, o.ref_lines));
    auto num = number_or_null;
    j["norm_vs_prediction"] = {{"words", p.words},
                               {"spearman_overprediction", num(p.spearman_overprediction)},
                               {"spearman_reference_frequency", num(p.spearman_reference_frequency)},
                               {"spearman_hypothesis_frequency", num(p.spearman_hypothesis_frequency)},
                               {"matrix", "output rows as stored (before an estimator's normalisation)"}};
  }

  std::vector<std::pair<std::string, std::vector<double>>> samples;
  j["norms"] = nlohmann::json::object();
  for (const auto& rm : distinct_matrices(emb)) {
    samples.emplace_back(rm.name, word_row_norms(*rm.matrix));
    const NormStats s = norm_stats(samples.back().second);
    j["norms"][rm.name] = {{"mean", s.mean}, {"std", s.std}, {"min", s.min}, {"max", s.max}};
  }
  // Seed 001's premise for l2 (rows uniform on the sphere), per distinct matrix.
  j["sphere"] = nlohmann::json::object();
  for (const auto& rm : distinct_matrices(emb))
    j["sphere"][rm.name] = sphere_json(sphere_uniformity(word_rows(*rm.matrix), o.pairs, o.seed));

  if (o.against) {
    // Seed 004 §4.5: the tied matrix (target side: the target embedding is the output) against
    // the untied model's target embedding E and output U.
    const WordEmbeddings& other = *o.against->model->embeddings;
    ResemblanceOptions ro;
    ro.pairs = o.pairs;
    ro.knn_words = o.knn_words;
    ro.seed = o.seed;
    const Resemblance r =
        matrix_resemblance(word_rows(emb.output()), word_rows(other.target()), word_rows(other.output()), ro);
    auto num = number_or_null;
    j["against"] = {{"model", o.against_path.empty() ? o.against->checkpoint : o.against_path},
                    {"checkpoint", o.against->checkpoint},
                    {"tie", name_of(other.spec().tie)},
                    {"spearman_input", num(r.spearman_input)},
                    {"spearman_output", num(r.spearman_output)},
                    {"spearman_input_output", num(r.spearman_input_output)},
                    {"knn10_input", num(r.knn_input)},
                    {"knn10_output", num(r.knn_output)},
                    {"knn10_input_output", num(r.knn_input_output)},
                    {"knn10_chance", num(r.knn_chance)},
                    {"cka_input", num(r.cka_input)},
                    {"cka_output", num(r.cka_output)},
                    {"cka_input_output", num(r.cka_input_output)},
                    {"row_cosine_input", num(r.row_cosine_input)},
                    {"row_cosine_output", num(r.row_cosine_output)},
                    {"pairs", r.pairs},
                    {"words", r.words},
                    {"knn_words", r.knn_words},
                    {"k", r.k},
                    {"input", "the untied model's target embedding E"},
                    {"output", "the untied model's output matrix U"},
                    {"input_output", "E against U within the untied model"},
                    {"row_cosine", "mean cos(W_i, E_i), cos(W_i, U_i) as stored: not rotation invariant, "
                                   "near 0 unless the two models started from the same matrix (same seed)"}};
  }
  PlotOptions hist;
  hist.title = "Embedding row norms (special ids left out)";
  hist.x_label = "‖w_i‖";
  hist.y_label = "rows";
  std::vector<std::string> pictures = write_picture(dir, "norms", histogram(samples, o.histogram_bins, hist));

  std::vector<Side> sides;
  if (emb.source()) sides.push_back({"source", word_rows(*emb.source()), &m.src_vocab});
  sides.push_back({"target", word_rows(emb.target()), &m.tgt_vocab});
  for (auto& p : write_picture(dir, "pca", pca_picture(sides, o))) pictures.push_back(p);

  j["pictures"] = pictures;
  write_json((dir / "analysis.json").string(), j);
  return j;
}

}  // namespace yoke
