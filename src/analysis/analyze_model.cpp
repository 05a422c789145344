#include "analysis/analyze_model.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "analysis/matrix_resemblance.h"
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

}  // namespace

ModelAnalysis analyze_model(const LoadedModel& m, const std::string& out_dir, const AnalyzeOptions& o) {
  at::NoGradGuard no_grad;
  const WordEmbeddings& emb = *m.model->embeddings;
  if (o.against)
    check_resemblance_pair(compared_model(m, o.model_path.empty() ? m.checkpoint : o.model_path),
                           compared_model(*o.against, o.against_path.empty() ? o.against->checkpoint : o.against_path));
  const fs::path dir(out_dir);
  fs::create_directories(dir);
  ModelAnalysis a;
  a.estimator = name_of(emb.spec().output);
  a.tie = name_of(emb.spec().tie);
  a.identity = identity_fraction(emb.spec().output, emb.output());
  a.normality_max_logit = normality_max_logit(emb.spec().output, emb.output(), o.random_probes, o.seed);
  a.tying_gap = tying_gap(emb);

  if (!o.hyp_lines.empty() || !o.ref_lines.empty()) {
    const auto norms_t = emb.output().row_norms().detach().to(at::kDouble).contiguous();
    const std::vector<double> norms(norms_t.data_ptr<double>(), norms_t.data_ptr<double>() + norms_t.numel());
    a.norm_vs_prediction = norm_vs_prediction(norms, subword_counts(m.tgt_vocab, o.hyp_lines),
                                              subword_counts(m.tgt_vocab, o.ref_lines));
  }

  std::vector<std::pair<std::string, std::vector<double>>> samples;
  for (const auto& rm : distinct_matrices(emb)) {
    samples.emplace_back(rm.name, word_row_norms(*rm.matrix));
    a.norms[rm.name] = norm_stats(samples.back().second);
  }
  // Seed 001's premise for l2 (rows uniform on the sphere), per distinct matrix.
  for (const auto& rm : distinct_matrices(emb)) a.sphere[rm.name] = sphere_uniformity(word_rows(*rm.matrix), o.pairs, o.seed);

  if (o.against) {
    // Seed 004 §4.5: the tied matrix (target side: the target embedding is the output) against
    // the untied model's target embedding E and output U.
    const WordEmbeddings& other = *o.against->model->embeddings;
    ResemblanceOptions ro;
    ro.pairs = o.pairs;
    ro.knn_words = o.knn_words;
    ro.seed = o.seed;
    a.against = AgainstModel{o.against_path.empty() ? o.against->checkpoint : o.against_path, o.against->checkpoint,
                             name_of(other.spec().tie),
                             matrix_resemblance(word_rows(emb.output()), word_rows(other.target()),
                                                word_rows(other.output()), ro)};
  }
  PlotOptions hist;
  hist.title = "Embedding row norms (special ids left out)";
  hist.x_label = "‖w_i‖";
  hist.y_label = "rows";
  a.pictures = write_picture(dir, "norms", histogram(samples, o.histogram_bins, hist));

  std::vector<Side> sides;
  if (emb.source()) sides.push_back({"source", word_rows(*emb.source()), &m.src_vocab});
  sides.push_back({"target", word_rows(emb.target()), &m.tgt_vocab});
  for (auto& p : write_picture(dir, "pca", pca_picture(sides, o))) a.pictures.push_back(p);

  write_json((dir / "analysis.json").string(), to_json(a));
  return a;
}

}  // namespace yoke
