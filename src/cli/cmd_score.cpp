#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "util/error.h"
#include "eval/score_files.h"

namespace yoke::cli {

int cmd_score(int argc, char** argv) {
  Command cmd("score",
              "Scores a hypothesis file against a reference file (one sentence per line) exactly as\n"
              "sacreBLEU 2.6 does with its defaults: BLEU (13a tokenizer, exponential smoothing), chrF\n"
              "(character order 6, beta 2) and chrF++ (word order 2).");
  std::string hyp, ref;
  bool lowercase = false, json = false;
  cmd.add_option("--hyp", hyp, "system output")->type_name("FILE")->required();
  CLI::Option* ref_option = cmd.add_option("--ref", ref, "reference translations (one file)")->type_name("FILE")->required();
  cmd.add_flag("--lowercase", lowercase, "case-insensitive scores");
  cmd.add_flag("--json", json, "print one JSON object (bleu, chrf, chrf_pp, precisions, bp, sys_len, ref_len)");
  if (!cmd.read(argc, argv)) return 0;
  // Options take their last value; a second reference would silently replace the first.
  if (ref_option->count() > 1)
    throw InputError("--ref given " + std::to_string(ref_option->count()) + " times: yoke score compares with one "
                     "reference file (multi-reference BLEU is not supported); give one");
  auto j = score_files(hyp, ref, lowercase);
  if (json) {
    std::cout << j.dump() << std::endl;
    return 0;
  }
  const auto& p = j.at("precisions");
  std::printf("BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)\n",
              j.at("bleu").get<double>(), p[0].get<double>(), p[1].get<double>(), p[2].get<double>(),
              p[3].get<double>(), j.at("bp").get<double>(),
              j.at("ref_len").get<double>() > 0 ? j.at("sys_len").get<double>() / j.at("ref_len").get<double>() : 0.0,
              j.at("sys_len").get<long long>(), j.at("ref_len").get<long long>());
  std::printf("chrF2 = %.2f\nchrF2++ = %.2f\n", j.at("chrf").get<double>(), j.at("chrf_pp").get<double>());
  return 0;
}

}  // namespace yoke::cli
