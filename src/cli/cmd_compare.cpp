// `yoke compare`: is system B better than system A? eval/significance.h's test over every seed's
// output (seeds and test sentences), and Koehn's sentence-only bootstrap beside it.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "eval/bleu_stats_file.h"
#include "eval/bootstrap.h"
#include "eval/significance.h"
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
              "Is system B better than system A on these references? Give one file per training seed for\n"
              "each system: the test counts the noise of the seeds (Δ per seed; files pair up by position\n"
              "when both systems have as many) and of the test sentences (from each sentence's BLEU\n"
              "statistics, without random draws), and prints Δ of the mean BLEU with its 95% interval,\n"
              "two-sided p, and the smallest Δ it could find (80% power at 5%). Koehn's sentence-only\n"
              "bootstrap, which holds the seeds fixed,\n"
              "is printed beside it. With one file a system there is no seed variance to test with: only\n"
              "the sentence-only bootstrap is left, and it says so. docs/statistics.md explains both.\n\n"
              "Files pair up by position only when both systems have as many; --unpaired compares them as\n"
              "independent samples (Welch) whatever their number, for systems whose seeds couple nothing (different\n"
              "shapes start from unrelated initialisations): docs/statistics.md, \"Pairing\".\n\n"
              "--scores-a / --scores-b take each seed's score instead of files (when the outputs are gone, or\n"
              "for perplexity): the seed part of the test alone. --expect E also says how many seeds a variant\n"
              "would find an effect of E.\n\n"
              "example: yoke compare --scores-a 37.62 36.69 35.95 --scores-b 37.84 36.42 36.98 --expect 0.6");
  std::vector<std::string> hyp_a, hyp_b;
  std::string ref_path;
  int samples = 1000;
  uint64_t seed = 12345;
  bool lowercase = false, json = false, unpaired = false;
  int comparisons = 1;
  std::vector<double> scores_a, scores_b;
  double expect = 0;
  auto* ha = cmd.add_option("--hyp-a", hyp_a, "system A's output (the baseline); several files: one per seed")
                 ->type_name("FILE...");
  auto* hb = cmd.add_option("--hyp-b", hyp_b, "system B's output; several files: one per seed")->type_name("FILE...");
  auto* rf = cmd.add_option("--ref", ref_path, "the references")->type_name("FILE");
  auto* sa = cmd.add_option("--scores-a", scores_a, "instead of files: A's score of each seed")->type_name("X...");
  auto* sb = cmd.add_option("--scores-b", scores_b, "instead of files: B's score of each seed (in the same seed order)")
                 ->type_name("X...");
  auto* ex = cmd.add_option("--expect", expect, "an effect to plan for: the seeds a variant that would find it")
                 ->type_name("E");
  ha->excludes(sa)->excludes(sb);
  hb->excludes(sa)->excludes(sb);
  rf->excludes(sa)->excludes(sb);
  add_value(cmd, "--samples", samples, "N", "samples of the sentence-only bootstrap")->capture_default_str();
  add_value(cmd, "--seed", seed, "S", "resampling seed of the sentence-only bootstrap")->capture_default_str();
  cmd.add_flag("--lowercase", lowercase, "case-insensitive BLEU");
  cmd.add_flag("--unpaired", unpaired, "compare the systems' seeds as independent samples (Welch), never by position");
  add_value(cmd, "--comparisons", comparisons, "M",
            "this comparison is one of M read together (a table's): also print the interval simultaneous over them, "
            "at 1 - 0.05/M (Bonferroni), and p times M, as the reports' verdicts read them")
      ->capture_default_str();
  cmd.add_flag("--json", json, "print one JSON object");
  if (!cmd.read(argc, argv)) return 0;
  if (samples < 2) throw InputError("compare: --samples must be at least 2, got " + std::to_string(samples));
  const Pairing pairing = unpaired ? Pairing::unpaired : Pairing::by_seed;
  if (comparisons < 1) throw InputError("compare: --comparisons must be at least 1, got " + std::to_string(comparisons));
  // The simultaneous interval of a family of M comparisons (Bonferroni), as report/verdict.h reads it.
  const auto simultaneous = [&](const SignificanceResult& r) -> nlohmann::json {
    const double level = 0.05 / comparisons, q = r.se > 0 ? t_quantile(1.0 - level / 2, r.df) : 0.0;
    return {{"low", r.delta - q * r.se}, {"high", r.delta + q * r.se}, {"level", 1.0 - level},
            {"p_adjusted", std::min(1.0, r.p_value * comparisons)}};
  };
  const auto print_simultaneous = [&](const SignificanceResult& r) {
    if (comparisons == 1 || !r.testable) return;
    const nlohmann::json i = simultaneous(r);
    std::printf("simultaneous over %d comparisons (Bonferroni): %.4g%% CI [%+.2f, %+.2f], p adj. = %.4f\n", comparisons,
                100.0 * i["level"].get<double>(), i["low"].get<double>(), i["high"].get<double>(),
                i["p_adjusted"].get<double>());
  };
  const auto planned = [&](const SignificanceResult& r) -> nlohmann::json {
    if (!*ex || !r.testable) return nullptr;
    const auto k = seeds_needed(r, expect);
    return k ? nlohmann::json(*k) : nlohmann::json(nullptr);
  };
  if (!scores_a.empty() || !scores_b.empty()) {
    if (scores_a.empty() || scores_b.empty()) throw InputError("compare: give both --scores-a and --scores-b");
    SeededScores a, b;
    for (size_t s = 0; s < scores_a.size(); ++s) a.seeds.push_back(int(s) + 1), a.scores.push_back(scores_a[s]);
    for (size_t s = 0; s < scores_b.size(); ++s) b.seeds.push_back(int(s) + 1), b.scores.push_back(scores_b[s]);
    const SignificanceResult r = seed_significance(a, b, pairing);
    if (json) {
      nlohmann::json out = {{"mean_a", r.mean_a}, {"mean_b", r.mean_b}, {"delta", r.delta}, {"method", "seeds"},
                            {"paired", r.paired}};
      if (r.testable)
        out.update({{"ci95", {r.ci_low, r.ci_high}}, {"p_value", r.p_value}, {"se", r.se}, {"df", r.df},
                    {"detectable", r.detectable}, {"seeds_needed", planned(r)}, {"simultaneous", simultaneous(r)}});
      std::printf("%s\n", out.dump().c_str());
      return 0;
    }
    std::printf("mean A %.2f | mean B %.2f | Δ %+.2f\n", r.mean_a, r.mean_b, r.delta);
    if (!r.testable) {
      std::printf("one score a system: no seed variance to test with\n");
      return 0;
    }
    std::printf("seeds only (%s, t on %.1f df): 95%% CI [%+.2f, %+.2f], p = %.4f (two-sided); smallest Δ found with 80%% "
                "power: %.2f\n",
                r.paired ? "paired by position" : "Welch", r.df, r.ci_low, r.ci_high, r.p_value, r.detectable);
    print_simultaneous(r);
    if (*ex) {
      const auto k = seeds_needed(r, expect);
      if (k) std::printf("%d seeds a variant would find Δ = %+.2f\n", *k, expect);
      else std::printf("no number of seeds up to 50 would find Δ = %+.2f\n", expect);
    }
    return 0;
  }
  if (hyp_a.empty() || hyp_b.empty() || ref_path.empty())
    throw InputError("compare: give --hyp-a, --hyp-b and --ref (or --scores-a and --scores-b)");
  const auto ref = read_lines(ref_path);
  auto stats_of = [&](const std::vector<std::string>& paths, std::vector<int>* seeds) {
    std::vector<std::vector<BleuStats>> out;
    for (const auto& lines : read_outputs(paths, ref.size(), ref_path))
      out.push_back(bleu_stats_of(lines, ref, ref_path, lowercase));
    for (size_t s = 0; s < paths.size(); ++s) seeds->push_back(int(s) + 1);  // position: pairs when counts agree
    return out;
  };
  std::vector<int> seeds_a, seeds_b;
  const auto a = stats_of(hyp_a, &seeds_a), b = stats_of(hyp_b, &seeds_b);
  const SignificanceResult r = bleu_significance(a, seeds_a, b, seeds_b, pairing);
  const BootstrapResult k = paired_bootstrap_bleu_seeds(a, b, samples, seed);
  std::vector<double> per_seed_delta;
  if (a.size() == b.size() && !unpaired)
    for (size_t s = 0; s < a.size(); ++s) per_seed_delta.push_back(k.bleu_b[s] - k.bleu_a[s]);
  if (json) {
    nlohmann::json out = {{"bleu_a", r.mean_a}, {"bleu_b", r.mean_b}, {"bleu_a_per_file", k.bleu_a},
                          {"bleu_b_per_file", k.bleu_b}, {"delta", r.delta}, {"delta_per_file", per_seed_delta},
                          {"sentence_bootstrap", {{"ci95", {k.ci_low, k.ci_high}}, {"p_value", k.p_value}, {"samples", k.samples}}}};
    if (r.testable) {
      out["method"] = "seeds and sentences";
      out["ci95"] = {r.ci_low, r.ci_high};
      out["p_value"] = r.p_value;
      out["detectable"] = r.detectable;
      out["seeds_needed"] = planned(r);
      out["test"] = {{"paired", r.paired}, {"se", r.se}, {"df", r.df}, {"var_seed", r.var_seed}, {"var_sentence", r.var_sentence}};
      out["simultaneous"] = simultaneous(r);
    } else {
      out["method"] = "sentences only (one file a system: no seed variance)";
      out["ci95"] = {k.ci_low, k.ci_high};
      out["p_value"] = k.p_value;
    }
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  if (a.size() > 1 || b.size() > 1)
    std::printf("BLEU A per file: %s\nBLEU B per file: %s\n", scores_text(k.bleu_a).c_str(), scores_text(k.bleu_b).c_str());
  if (per_seed_delta.size() > 1) std::printf("Δ per file pair: %s\n", scores_text(per_seed_delta).c_str());
  const char* mean = a.size() > 1 || b.size() > 1 ? "mean " : "";
  std::printf("%sBLEU A %.2f | %sBLEU B %.2f | Δ %+.2f\n", mean, r.mean_a, mean, r.mean_b, r.delta);
  if (r.testable) {
    std::printf("seeds and sentences: 95%% CI [%+.2f, %+.2f], p = %.4f (two-sided, t on %.1f df, %s); smallest Δ found "
                "with 80%% power: %.2f%s\n",
                r.ci_low, r.ci_high, r.p_value, r.df, r.paired ? "paired by file position" : "Welch",
                r.detectable, r.p_value < 0.05 ? (r.delta > 0 ? " | B is significantly better" : " | B is significantly worse") : "");
    print_simultaneous(r);
  } else {
    std::printf("one file a system: no seed variance to test with; give one file per seed for a test that counts it\n");
  }
  std::printf("sentences only (seeds held fixed): 95%% CI [%+.2f, %+.2f], p = %.4f (%d samples)\n", k.ci_low, k.ci_high,
              k.p_value, k.samples);
  return 0;
}

}  // namespace yoke::cli
