// `yoke compare`: is system B better than system A? Paired bootstrap resampling (Koehn 2004),
// over every seed's output when several are given (eval/bootstrap.h states the method).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "eval/bootstrap.h"
#include "text/corpus.h"
#include "util/error.h"

namespace yoke::cli {

namespace {

// Every file of one system, each checked against the references' length.
std::vector<std::vector<std::string>> read_outputs(const std::vector<std::string>& paths, size_t n_refs,
                                                   const std::string& ref_path) {
  std::vector<std::vector<std::string>> out;
  for (const auto& path : paths) {
    out.push_back(read_lines(path));
    if (out.back().size() != n_refs)
      throw InputError(path + " has " + std::to_string(out.back().size()) + " lines but " + ref_path + " has " +
                       std::to_string(n_refs));
  }
  return out;
}

std::string scores_text(const std::vector<double>& scores) {
  std::string s;
  for (double v : scores) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.2f", s.empty() ? "" : ", ", v);
    s += buf;
  }
  return s;
}

}  // namespace

int cmd_compare(int argc, char** argv) {
  Command cmd("compare",
              "Paired bootstrap resampling (Koehn 2004) of the BLEU difference between two systems' outputs\n"
              "for the same references. Give several files per system (one per training seed) to test the\n"
              "difference of the mean BLEU over seeds: every resample of the test sentences scores every\n"
              "seed. p is the share of resampled test sets on which B is not better than A (ties count\n"
              "half): small p means B is significantly better; about 0.5 means no difference. The 95%\n"
              "interval of Δ is the 2.5th-97.5th percentile over the resamples.");
  std::vector<std::string> hyp_a, hyp_b;
  std::string ref_path;
  int samples = 1000;
  uint64_t seed = 12345;
  bool lowercase = false, json = false;
  cmd.add_option("--hyp-a", hyp_a, "system A's output (the baseline); several files: one per seed")
      ->type_name("FILE...")
      ->required();
  cmd.add_option("--hyp-b", hyp_b, "system B's output; several files: one per seed")->type_name("FILE...")->required();
  cmd.add_option("--ref", ref_path, "the references")->type_name("FILE")->required();
  add_value(cmd, "--samples", samples, "N", "bootstrap samples")->capture_default_str();
  add_value(cmd, "--seed", seed, "S", "resampling seed")->capture_default_str();
  cmd.add_flag("--lowercase", lowercase, "case-insensitive BLEU");
  cmd.add_flag("--json", json, "print one JSON object");
  if (!cmd.read(argc, argv)) return 0;
  const auto ref = read_lines(ref_path);
  const auto a = read_outputs(hyp_a, ref.size(), ref_path), b = read_outputs(hyp_b, ref.size(), ref_path);
  const auto r = paired_bootstrap_bleu_seeds(a, b, ref, samples, seed, lowercase);
  // Seeds pair up by position when both systems have as many files.
  std::vector<double> per_seed_delta;
  if (a.size() == b.size())
    for (size_t s = 0; s < a.size(); ++s) per_seed_delta.push_back(r.bleu_b[s] - r.bleu_a[s]);
  if (json) {
    std::printf("%s\n", nlohmann::json{{"bleu_a", r.mean_a}, {"bleu_b", r.mean_b}, {"bleu_a_per_file", r.bleu_a},
                                       {"bleu_b_per_file", r.bleu_b}, {"delta", r.delta},
                                       {"delta_per_file", per_seed_delta}, {"ci95", {r.ci_low, r.ci_high}},
                                       {"p_value", r.p_value}, {"samples", r.samples}}
                            .dump()
                            .c_str());
    return 0;
  }
  if (a.size() > 1 || b.size() > 1)
    std::printf("BLEU A per file: %s\nBLEU B per file: %s\n", scores_text(r.bleu_a).c_str(), scores_text(r.bleu_b).c_str());
  if (per_seed_delta.size() > 1) std::printf("Δ per file pair: %s\n", scores_text(per_seed_delta).c_str());
  const char* mean = a.size() > 1 || b.size() > 1 ? "mean " : "";
  std::printf("%sBLEU A %.2f | %sBLEU B %.2f | Δ %+.2f, 95%% CI [%+.2f, %+.2f] | p = %.4f (%d samples)%s\n", mean,
              r.mean_a, mean, r.mean_b, r.delta, r.ci_low, r.ci_high, r.p_value, r.samples,
              r.p_value < 0.05 ? " | B is significantly better" : "");
  return 0;
}

}  // namespace yoke::cli
