// `yoke analyze`: norms, estimator properties, tying gap, PCA and distance from uniform on the sphere of
// a trained model's word matrices, and with --against its tied matrix's resemblance to an untied
// model's input and output matrices, as files (norm histogram, PCA picture, analysis.json) and a
// short summary on standard output.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "analysis/analyze_model.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "experiment/pictures.h"
#include "text/corpus.h"
#include "util/error.h"
#include "store/model_files.h"

namespace fs = std::filesystem;

namespace yoke::cli {
namespace {

// A measurement, or "n/a" where there is none (NaN: analysis/model_analysis.h).
std::string number(double v, const char* format = "%.4f") {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

int cmd_analyze(int argc, char** argv) {
  Command cmd("analyze",
              "Measures a trained model's word matrices and writes into --out:\n"
              "  norms.svg      histogram of embedding-row norms, one sample per distinct matrix\n"
              "  pca.svg        source and target rows on the top-2 principal components of their union\n"
              "  analysis.json  identity and normality of the output estimator, tying gap (untied\n"
              "                 target/output only), norm statistics, sphere statistics (below),\n"
              "                 estimator, tie, pictures written, and with --against the comparison\n"
              "  grad_paths.svg share of the embedding gradient through the output projection per\n"
              "                 update, when the model was trained with log_grad_paths = true\n"
              "With --hyp and --ref (a test set's translations and references), analysis.json also\n"
              "holds norm_vs_prediction: Spearman's rank correlation of each output row's norm with how\n"
              "much more often the word is predicted than the references use it, log((hyp+1)/(ref+1))\n"
              "(Liu, Zhai & Chen 2020 §2.2: dot favours words whose rows are long).\n"
              "PNG copies are written too when rsvg-convert, inkscape or ImageMagick is installed.\n"
              "Special ids (pad, unk, bos, eos) are left out of every measurement.\n\n"
              "analysis.json's \"sphere\", per distinct matrix: how far its unit rows ŵ_i = w_i/‖w_i‖ are\n"
              "from uniform i.i.d. on the unit sphere, the premise of seed 001 §2.2.1 (eq. 20) under which\n"
              "l2-normalised rows estimate the logits without bias. Each beside what V uniform rows in d\n"
              "dimensions would give:\n"
              "  mean_resultant_length  ‖mean_i ŵ_i‖: a shared direction (a cone)   uniform ≈ 1/√V\n"
              "  pair_cosine            ŵ_i·ŵ_j over --pairs random pairs i ≠ j     uniform mean 0, std 1/√d\n"
              "  top_pc_share           variance of the centred unit rows on the first principal\n"
              "                         component                                    uniform ≈ (1+√(d/V))²/d → 1/d\n"
              "  participation_ratio    (Σλ)²/Σλ² of their covariance eigenvalues, the effective\n"
              "                         dimension                                    uniform ≈ d/(1+(d−1)/V) → d\n\n"
              "With --against UNTIED (target embedding and output apart: tie none; same task, same target\n"
              "vocabulary), --model having them tied (tie all or decoder), analysis.json's \"against\" tests\n"
              "seed 004 §4.5: the output path carries most of a tied matrix's gradient, so \"the tied matrix\n"
              "evolves to resemble an output embedding more than an input embedding\". The tied matrix W is\n"
              "compared with UNTIED's target embedding E (input) and output matrix U, rows matched by word\n"
              "id. Two models trained from different random starts have no reason to share coordinates\n"
              "(their spaces are related at best by an unknown transform), so cos(W_i, E_i) compares\n"
              "nothing; only structure is compared, by statistics a rotation leaves unchanged:\n"
              "  spearman_*  Spearman's ρ of cos(W_i, W_j) with cos(E_i, E_j), resp. cos(U_i, U_j), over the\n"
              "              same --pairs random word pairs\n"
              "  knn10_*     mean share of a word's 10 nearest rows (cosine) that W and E, resp. U, agree\n"
              "              on, over --knn-words random words (chance: 10/(V−1))\n"
              "  cka_*       linear CKA of the rows (1 for a rotation or rescaling of the same matrix)\n"
              "  *_input_output  the same between E and U (how alike the untied model's own matrices are).\n"
              "  row_cosine_*  a diagnostic, not a comparison: mean cos(W_i, E_i), resp. cos(W_i, U_i), as\n"
              "              stored; ≈ 0 unless both models started from one matrix (the same seed), whose\n"
              "              structure the statistics above then carry too: compare other seeds as well.\n"
              "\"Resembles an output embedding more\" predicts each *_output above its *_input.\n\n"
              "example: yoke analyze --model runs/tied-ende --out runs/tied-ende/analysis\n"
              "         yoke analyze --model runs/lm-tied --against runs/lm-untied --out runs/lm-tied/analysis");
  ModelOptions model;
  add_model_options(cmd, model, /*with_device=*/false);
  std::string out;
  AnalyzeOptions options;
  int seed = 1, threads = 0;
  cmd.add_option("--out", out, "where to write the pictures and analysis.json (created if missing)")
      ->type_name("DIR")
      ->required();
  add_value(cmd, "--probes", options.random_probes, "N", "random unit vectors h for the normality maximum")
      ->capture_default_str();
  add_value(cmd, "--seed", seed, "N", "seed of those random vectors, of the word pairs and of the --knn-words")
      ->capture_default_str();
  add_value(cmd, "--pairs", options.pairs, "N",
            "random word pairs for the sphere's pair cosines and the --against correlations (all when fewer)")
      ->capture_default_str();
  std::string against_dir, against_checkpoint;
  cmd.add_option("--against", against_dir, "an untied model (tie none) of the same vocabulary to compare --model's tied matrix with")
      ->type_name("DIR");
  add_checkpoint_option(cmd, against_checkpoint, "checkpoint file in the --against DIR", "--against-checkpoint");
  add_value(cmd, "--knn-words", options.knn_words, "N", "--against: random words whose 10 nearest neighbours are compared")
      ->capture_default_str();
  std::string hyp, ref;
  cmd.add_option("--hyp", hyp, "the model's translations of a test set, one per line (with --ref)")->type_name("FILE");
  cmd.add_option("--ref", ref, "that test set's references (with --hyp)")->type_name("FILE");
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (hyp.empty() != ref.empty()) throw InputError("--hyp and --ref go together: give both or neither");
  if (!hyp.empty()) {
    options.hyp_lines = read_lines(hyp);
    options.ref_lines = read_lines(ref);
    if (options.hyp_lines.size() != options.ref_lines.size())
      throw InputError(hyp + " has " + std::to_string(options.hyp_lines.size()) + " lines but " + ref + " has " +
                       std::to_string(options.ref_lines.size()) + ": they must be the same test set");
  }
  if (*threads_given) compat::set_compute_threads(threads);
  options.seed = uint64_t(seed);
  if (options.random_probes < 0) throw InputError("--probes must not be negative");
  if (options.pairs < 0) throw InputError("--pairs must not be negative");
  if (options.knn_words < 0) throw InputError("--knn-words must not be negative");
  if (!against_checkpoint.empty() && against_dir.empty()) throw InputError("--against-checkpoint needs --against");

  auto m = load_model(model.dir, model.checkpoint, "cpu", ModelUse::read_weights);  // on the CPU: the analyses are O(V·d)
  std::optional<LoadedModel> against;
  if (!against_dir.empty()) {
    against = load_model(against_dir, against_checkpoint, "cpu", ModelUse::read_weights);
    options.against = &*against;
    options.model_path = model.dir;
    options.against_path = against_dir;
  }
  ModelAnalysis a = analyze_model(m, out, options);
  if (draw_gradient_paths((fs::path(model.dir) / kMetricsLog).string(),
                          (fs::path(out) / "grad_paths.svg").string()))
    a.pictures.push_back("grad_paths.svg");

  std::printf("model      %s (tie %s, estimator %s)\n", m.checkpoint.c_str(), a.tie.c_str(), a.estimator.c_str());
  std::printf("identity   %s  (share of words k with argmax ℓ(w_k) = k)\n", number(a.identity).c_str());
  std::printf("normality  %s  (largest ℓ for a unit h; ≤ 1 means normality holds)\n",
              number(a.normality_max_logit).c_str());
  std::printf("tying gap  %s  (mean cos(e_j, u_j); n/a when target and output are one matrix)\n",
              number(a.tying_gap.value_or(NAN)).c_str());
  if (const auto& p = a.norm_vs_prediction)
    std::printf("norm vs over-prediction  ρ %s over %lld words (ρ with reference frequency %s)\n",
                number(p->spearman_overprediction, "%.3f").c_str(), (long long)p->words,
                number(p->spearman_reference_frequency, "%.3f").c_str());
  for (const auto& [name, s] : a.norms)
    std::printf("‖w_i‖      %-32s mean %s  std %s  min %s  max %s\n", name.c_str(), number(s.mean, "%.3f").c_str(),
                number(s.std, "%.3f").c_str(), number(s.min, "%.3f").c_str(), number(s.max, "%.3f").c_str());
  for (const auto& [name, s] : a.sphere)
    std::printf("sphere     %-32s ‖mean ŵ‖ %s (uniform %s)  cos %s ± %s (uniform 0 ± %s)  PC1 %s (uniform %s)  "
                "eff. dim %s (uniform %s)\n",
                name.c_str(), number(s.mean_resultant_length, "%.3f").c_str(),
                number(s.mean_resultant_length_uniform, "%.3f").c_str(), number(s.cosine_mean, "%.3f").c_str(),
                number(s.cosine_std, "%.3f").c_str(), number(s.cosine_std_uniform, "%.3f").c_str(),
                number(s.top_pc_share, "%.4f").c_str(), number(s.top_pc_share_uniform, "%.4f").c_str(),
                number(s.participation_ratio, "%.1f").c_str(), number(s.participation_ratio_uniform, "%.1f").c_str());
  if (const auto& g = a.against) {
    const Resemblance& r = g->resemblance;
    std::printf("against    %s: tied matrix vs its input E / output U (resembles output: second larger)\n",
                g->model.c_str());
    std::printf("           Spearman of pair cosines  %s / %s   kNN-10 overlap  %s / %s (chance %s)   CKA  %s / %s\n",
                number(r.spearman_input, "%.3f").c_str(), number(r.spearman_output, "%.3f").c_str(),
                number(r.knn_input, "%.3f").c_str(), number(r.knn_output, "%.3f").c_str(),
                number(r.knn_chance, "%.4f").c_str(), number(r.cka_input, "%.3f").c_str(),
                number(r.cka_output, "%.3f").c_str());
    std::printf("           mean cos(W_i, ·_i) as stored  %s / %s (≈ 0 unless both models started from one matrix)\n",
                number(r.row_cosine_input, "%.3f").c_str(), number(r.row_cosine_output, "%.3f").c_str());
  }
  std::printf("wrote\n  %s\n", (fs::path(out) / "analysis.json").string().c_str());
  for (const auto& p : a.pictures) std::printf("  %s\n", (fs::path(out) / p).string().c_str());
  return 0;
}

}  // namespace yoke::cli
