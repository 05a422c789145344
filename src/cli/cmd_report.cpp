// `yoke report DIR`: an experiment's report rebuilt from the files of its folder alone.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "experiment/runner.h"
#include "report/registered_report.h"
#include "report/signed_number.h"
#include "report/variant_report.h"
#include "util/json_file.h"

namespace yoke::cli {

namespace {

// "[−0.30, +0.50] 97.5%": an interval and its level as the lines below print it.
std::string interval_text(const DecisionInterval& i) {
  char level[32];
  std::snprintf(level, sizeof level, "%.4g%%", 100.0 * i.level);
  return "[" + signed_number(i.low) + ", " + signed_number(i.high) + "] " + level;
}

// One line per comparison: "- l2 vs dot, flickr2016: inconclusive — why (Δ +0.12 [−0.3, +0.5] 97.5%, p 0.41, adj. 0.82;
// expected +0.50)", with the interval the verdict read.
void print_verdicts(const std::vector<VariantEntry>& variants, const std::string& baseline, std::ostream& out) {
  for (const VariantEntry& e : variants) {
    if (e.baseline) continue;
    for (const auto& [test, t] : e.tests) {
      if (!t.verdict) continue;
      out << "- " << e.variant << " vs " << baseline << ", " << test << ": " << t.verdict->verdict.verdict << " — "
          << t.verdict->verdict.why;
      std::string numbers;
      if (t.delta && std::isfinite(*t.delta)) numbers = "\xCE\x94 " + signed_number(*t.delta);
      if (t.interval) numbers += " " + interval_text(*t.interval);
      char p[64] = "";
      if (t.p_value) std::snprintf(p, sizeof p, ", p %.3f, adj. %.3f", *t.p_value, t.p_adjusted.value_or(1.0));
      numbers += p;
      if (t.expected) numbers += "; expected " + signed_number(*t.expected);
      out << " (" << numbers << ")\n";
    }
  }
}

// The registered comparisons first (report/registered_report.h), one line each in the same form:
// "- registered: shared-private − vanilla, decide: reproduced — why (Δ +2.40 [+1.10, +3.70] 98.33%;
// better, seed +0.44, margin 0.22)", and the other pairing's line under it.
void print_registered(const RegisteredDecision& d, std::ostream& out) {
  for (const DecidedComparison& c : d.comparisons) {
    out << "- registered: " << c.claim.b << " \xE2\x88\x92 " << c.claim.a << ", " << d.registration.test << ": "
        << c.verdict.verdict << " \xE2\x80\x94 " << c.verdict.why << " (";
    if (c.tested) out << "\xCE\x94 " << signed_number(c.delta) << " " << interval_text(c.interval) << "; ";
    out << claim_kind_name(c.claim.kind);
    if (c.claim.seed_effect) out << ", seed " << signed_number(*c.claim.seed_effect);
    char margin[32];
    std::snprintf(margin, sizeof margin, "%.2f", c.claim.margin);
    out << ", margin " << margin << ")\n";
    if (c.sensitivity) out << "  - sensitivity, not the verdict: " << c.sensitivity->why << "\n";
  }
}

}  // namespace

int cmd_report(int argc, char** argv) {
  Command cmd("report",
              "Rebuilds report.md/.csv/.json/.html (and the pictures) of an experiment folder from its own\n"
              "files: experiment.json, and per finished run result.json, bleu.<test>.tsv.gz (per-sentence BLEU\n"
              "statistics) and model/metrics.jsonl. The same files give the same report, byte for byte; no\n"
              "data, references or checkpoints are read.\n\n"
              "--export DEST copies those files (and the hypotheses and analysis pictures, no checkpoints)\n"
              "into DEST and reports there: the folder to commit under docs/results/.\n"
              "--verdicts prints the verdict of each comparison in DIR/report.json, one line each.\n\n"
              "example: yoke report docs/results/seed004-lm-gradshare-cpu");
  std::string dir, dest;
  bool verdicts = false;
  cmd.add_option("dir", dir, "the experiment folder (yoke experiment --out)")->type_name("DIR")->required();
  cmd.add_option("--export", dest, "copy what the report is made from into DEST, then report there")->type_name("DEST");
  cmd.add_flag("--verdicts", verdicts,
               "print each comparison's verdict from DIR/report.json, one Markdown line each (for the claims index)");
  if (!cmd.read(argc, argv)) return 0;
  if (verdicts) {
    const std::string path = dir + "/report.json";
    const nlohmann::json report = read_json(path);
    if (report.contains("registration") && report["registration"].is_object())
      print_registered(registered_decision_from_json(report["registration"], path), std::cout);
    const std::string metric = report.value("metric", "bleu");
    print_verdicts(variants_from_json(report.value("variants", nlohmann::json::array()), metric, path),
                   report.value("baseline", ""), std::cout);
    return 0;
  }
  if (dest.empty())
    write_experiment_report(dir, std::cerr);
  else
    export_experiment(dir, dest, std::cerr);
  return 0;
}

}  // namespace yoke::cli
