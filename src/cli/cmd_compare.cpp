// `yoke compare`: is system B better than system A? Paired bootstrap resampling (Koehn 2004).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "eval/bootstrap.h"
#include "text/corpus.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_compare(int argc, char** argv) {
  Command cmd("compare",
              "Paired bootstrap resampling (Koehn 2004) of the BLEU difference between two systems' outputs\n"
              "for the same references. p is the share of resampled test sets on which B is not better than\n"
              "A (ties count half): small p means B is significantly better; about 0.5 means no difference.");
  std::string hyp_a, hyp_b, ref_path;
  int samples = 1000;
  uint64_t seed = 12345;
  bool lowercase = false, json = false;
  cmd.add_option("--hyp-a", hyp_a, "system A's output (the baseline)")->type_name("FILE")->required();
  cmd.add_option("--hyp-b", hyp_b, "system B's output")->type_name("FILE")->required();
  cmd.add_option("--ref", ref_path, "the references")->type_name("FILE")->required();
  add_value(cmd, "--samples", samples, "N", "bootstrap samples")->capture_default_str();
  add_value(cmd, "--seed", seed, "S", "resampling seed")->capture_default_str();
  cmd.add_flag("--lowercase", lowercase, "case-insensitive BLEU");
  cmd.add_flag("--json", json, "print one JSON object");
  if (!cmd.read(argc, argv)) return 0;
  const auto a = read_lines(hyp_a), b = read_lines(hyp_b), ref = read_lines(ref_path);
  for (const auto& [name, lines] : {std::pair<const std::string*, const std::vector<std::string>*>{&hyp_a, &a}, {&hyp_b, &b}})
    if (lines->size() != ref.size())
      throw InputError(*name + " has " + std::to_string(lines->size()) + " lines but " + ref_path + " has " +
                       std::to_string(ref.size()));
  const auto r = paired_bootstrap_bleu(a, b, ref, samples, seed, lowercase);
  if (json) {
    std::printf("%s\n", nlohmann::json{{"bleu_a", r.bleu_a}, {"bleu_b", r.bleu_b}, {"delta", r.delta},
                                       {"p_value", r.p_value}, {"samples", r.samples}}.dump().c_str());
  } else {
    std::printf("BLEU A %.2f | BLEU B %.2f | Δ %+.2f | p = %.4f (%d samples)%s\n", r.bleu_a, r.bleu_b, r.delta, r.p_value,
                r.samples, r.p_value < 0.05 ? " | B is significantly better" : "");
  }
  return 0;
}

}  // namespace yoke::cli
