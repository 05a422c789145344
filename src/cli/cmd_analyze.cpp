// `yoke analyze`: norms, estimator properties, tying gap and PCA on a trained model's word matrices, as files
// (norm histogram, PCA picture, analysis.json) and a short summary on standard output.
#include <cstdio>
#include <filesystem>

#include "analysis/analyze_model.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "experiment/pictures.h"
#include "text/corpus.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke::cli {
namespace {

// A number from analysis.json, or "n/a" where it is null (e.g. the tying gap of a tied model).
std::string number(const nlohmann::json& v, const char* format = "%.4f") {
  if (!v.is_number()) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v.get<double>());
  return buf;
}

}  // namespace

int cmd_analyze(int argc, char** argv) {
  Command cmd("analyze",
              "Measures a trained model's word matrices and writes into --out:\n"
              "  norms.svg      histogram of embedding-row norms, one sample per distinct matrix\n"
              "  pca.svg        source and target rows on the top-2 principal components of their union\n"
              "  analysis.json  identity and normality of the output estimator, tying gap (untied\n"
              "                 target/output only), norm statistics, estimator, tie, pictures written\n"
              "  grad_paths.svg share of the embedding gradient through the output projection per\n"
              "                 update, when the model was trained with log_grad_paths = true\n"
              "With --hyp and --ref (a test set's translations and references), analysis.json also\n"
              "holds norm_vs_prediction: Spearman's rank correlation of each output row's norm with how\n"
              "much more often the word is predicted than the references use it, log((hyp+1)/(ref+1))\n"
              "(Liu, Zhai & Chen 2020 §2.2: dot favours words whose rows are long).\n"
              "PNG copies are written too when rsvg-convert, inkscape or ImageMagick is installed.\n"
              "Special ids (pad, unk, bos, eos) are left out of every measurement.\n\n"
              "example: yoke analyze --model runs/tied-ende --out runs/tied-ende/analysis");
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
  add_value(cmd, "--seed", seed, "N", "seed of those random vectors")->capture_default_str();
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
  if (*threads_given) at::set_num_threads(threads);
  options.seed = uint64_t(seed);
  if (options.random_probes < 0) throw InputError("--probes must not be negative");

  auto m = load_model(model.dir, model.checkpoint);  // on the CPU: the analyses are O(V·d)
  nlohmann::json j = analyze_model(m, out, options);
  if (draw_gradient_paths((fs::path(model.dir) / "metrics.jsonl").string(),
                          (fs::path(out) / "grad_paths.svg").string()))
    j["pictures"].push_back("grad_paths.svg");

  std::printf("model      %s (tie %s, estimator %s)\n", m.checkpoint.c_str(), j["tie"].get<std::string>().c_str(),
              j["estimator"].get<std::string>().c_str());
  std::printf("identity   %s  (share of words k with argmax ℓ(w_k) = k)\n", number(j["identity"]).c_str());
  std::printf("normality  %s  (largest ℓ for a unit h; ≤ 1 means normality holds)\n",
              number(j["normality_max_logit"]).c_str());
  std::printf("tying gap  %s  (mean cos(e_j, u_j); n/a when target and output are one matrix)\n",
              number(j["tying_gap"]).c_str());
  if (j.contains("norm_vs_prediction")) {
    const auto& p = j["norm_vs_prediction"];
    std::printf("norm vs over-prediction  ρ %s over %lld words (ρ with reference frequency %s)\n",
                number(p["spearman_overprediction"], "%.3f").c_str(), (long long)p["words"].get<int64_t>(),
                number(p["spearman_reference_frequency"], "%.3f").c_str());
  }
  for (const auto& [name, s] : j["norms"].items())
    std::printf("‖w_i‖      %-32s mean %s  std %s  min %s  max %s\n", name.c_str(), number(s["mean"], "%.3f").c_str(),
                number(s["std"], "%.3f").c_str(), number(s["min"], "%.3f").c_str(), number(s["max"], "%.3f").c_str());
  std::printf("wrote\n  %s\n", (fs::path(out) / "analysis.json").string().c_str());
  for (const auto& p : j["pictures"]) std::printf("  %s\n", (fs::path(out) / p.get<std::string>()).string().c_str());
  return 0;
}

}  // namespace yoke::cli
