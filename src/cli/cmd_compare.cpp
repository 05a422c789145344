// `yoke compare`: is system B better than system A? Paired bootstrap resampling (Koehn 2004).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "eval/bootstrap.h"
#include "text/corpus.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_compare(int argc, char** argv) {
  Args args("compare",
            "Paired bootstrap resampling (Koehn 2004) of the BLEU difference between two systems' outputs\n"
            "for the same references. p is the share of resampled test sets on which B is not better than\n"
            "A (ties count half): small p means B is significantly better; about 0.5 means no difference.",
            {{"hyp-a", "FILE", "system A's output (the baseline)"},
             {"hyp-b", "FILE", "system B's output"},
             {"ref", "FILE", "the references"},
             {"samples", "N", "bootstrap samples", "1000"},
             {"seed", "S", "resampling seed", "12345"},
             {"lowercase", "", "case-insensitive BLEU"},
             {"json", "", "print one JSON object"}});
  if (!args.parse(argc, argv, 2)) return 0;
  const auto a = read_lines(args.require("hyp-a")), b = read_lines(args.require("hyp-b")), ref = read_lines(args.require("ref"));
  for (const auto& [name, lines] : {std::pair<const char*, const std::vector<std::string>*>{"hyp-a", &a}, {"hyp-b", &b}})
    if (lines->size() != ref.size())
      throw InputError(args.get(name) + " has " + std::to_string(lines->size()) + " lines but " + args.get("ref") + " has " +
                       std::to_string(ref.size()));
  const auto r = paired_bootstrap_bleu(a, b, ref, args.get_int("samples"), uint64_t(std::stoull(args.get("seed"))),
                                       args.flag("lowercase"));
  if (args.flag("json")) {
    std::printf("%s\n", nlohmann::json{{"bleu_a", r.bleu_a}, {"bleu_b", r.bleu_b}, {"delta", r.delta},
                                       {"p_value", r.p_value}, {"samples", r.samples}}.dump().c_str());
  } else {
    std::printf("BLEU A %.2f | BLEU B %.2f | Δ %+.2f | p = %.4f (%d samples)%s\n", r.bleu_a, r.bleu_b, r.delta, r.p_value,
                r.samples, r.p_value < 0.05 ? " | B is significantly better" : "");
  }
  return 0;
}

}  // namespace yoke::cli
