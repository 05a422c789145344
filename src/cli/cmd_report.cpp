// `yoke report DIR`: an experiment's report rebuilt from the files of its folder alone.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "experiment/runner.h"
#include "report/signed_number.h"
#include "util/json_file.h"

namespace yoke::cli {

namespace {

std::string signed2(const nlohmann::json& v) { return signed_number(v.get<double>()); }

// One line per comparison: "- l2 vs dot, flickr2016: inconclusive — why (Δ +0.12 [−0.3, +0.5] 97.5%, p 0.41, adj. 0.82;
// expected +0.50)", with the interval the verdict read.
void print_verdicts(const nlohmann::json& report, std::ostream& out) {
  const std::string metric = report.value("metric", "bleu"), baseline = report.value("baseline", "");
  for (const auto& e : report.at("variants")) {
    if (e.value("baseline", false)) continue;
    for (const auto& [test, t] : e.at("tests").items()) {
      if (!t.contains("verdict") || !t["verdict"].is_object()) continue;
      out << "- " << e.value("variant", "") << " vs " << baseline << ", " << test << ": "
          << t["verdict"].value("verdict", "") << " — " << t["verdict"].value("why", "");
      std::string numbers;
      if (t.contains("delta_" + metric) && t["delta_" + metric].is_number())
        numbers = "\xCE\x94 " + signed2(t["delta_" + metric]);
      if (t.contains("interval") && t["interval"].is_object()) {
        const auto& i = t["interval"];
        char level[32];
        std::snprintf(level, sizeof level, "%.4g%%", 100.0 * i.value("level", 0.95));
        numbers += " [" + signed2(i["low"]) + ", " + signed2(i["high"]) + "] " + level;
      }
      char p[64] = "";
      if (t.contains("p_value") && t["p_value"].is_number())
        std::snprintf(p, sizeof p, ", p %.3f, adj. %.3f", t["p_value"].get<double>(), t.value("p_adjusted", 1.0));
      numbers += p;
      if (t.contains("expected") && t["expected"].is_number()) numbers += "; expected " + signed2(t["expected"]);
      out << " (" << numbers << ")\n";
    }
  }
}

// The registered comparisons first (report/registered_report.h), one line each in the same form:
// "- registered: shared-private − vanilla, decide: reproduced — why (Δ +2.40 [+1.10, +3.70] 98.33%;
// better, seed +0.44, margin 0.22)", and the other pairing's line under it.
void print_registered(const nlohmann::json& report, std::ostream& out) {
  if (!report.contains("registration") || !report["registration"].is_object()) return;
  const auto& d = report["registration"];
  for (const auto& c : d.at("comparisons")) {
    out << "- registered: " << c.value("b", "") << " \xE2\x88\x92 " << c.value("a", "") << ", " << d.value("test", "")
        << ": " << c["verdict"].value("verdict", "") << " \xE2\x80\x94 " << c["verdict"].value("why", "") << " (";
    if (c.contains("interval")) {
      char level[32];
      std::snprintf(level, sizeof level, "%.4g%%", 100.0 * c["interval"].value("level", 0.95));
      out << "\xCE\x94 " << signed2(c["delta"]) << " [" << signed2(c["interval"]["low"]) << ", "
          << signed2(c["interval"]["high"]) << "] " << level << "; ";
    }
    out << c.value("claim", "");
    if (c["seed"].is_number()) out << ", seed " << signed2(c["seed"]);
    char margin[32];
    std::snprintf(margin, sizeof margin, "%.2f", c.value("margin", 0.0));
    out << ", margin " << margin << ")\n";
    if (c.contains("sensitivity")) out << "  - sensitivity, not the verdict: " << c["sensitivity"].value("why", "") << "\n";
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
    const nlohmann::json report = read_json(dir + "/report.json");
    print_registered(report, std::cout);
    print_verdicts(report, std::cout);
    return 0;
  }
  if (dest.empty())
    write_experiment_report(dir, std::cerr);
  else
    export_experiment(dir, dest, std::cerr);
  return 0;
}

}  // namespace yoke::cli
