// `yoke report DIR`: an experiment's report rebuilt from the files of its folder alone.
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "experiment/runner.h"

namespace yoke::cli {

int cmd_report(int argc, char** argv) {
  Command cmd("report",
              "Rebuilds report.md/.csv/.json/.html (and the pictures) of an experiment folder from its own\n"
              "files: experiment.json, and per finished run result.json, bleu.<test>.tsv.gz (per-sentence BLEU\n"
              "statistics) and model/metrics.jsonl. The same files give the same report, byte for byte; no\n"
              "data, references or checkpoints are read.\n\n"
              "--export DEST copies those files (and the hypotheses and analysis pictures, no checkpoints)\n"
              "into DEST and reports there: the folder to commit under docs/results/.\n\n"
              "example: yoke report docs/results/seed004-lm-gradshare-cpu");
  std::string dir, dest;
  cmd.add_option("dir", dir, "the experiment folder (yoke experiment --out)")->type_name("DIR")->required();
  cmd.add_option("--export", dest, "copy what the report is made from into DEST, then report there")->type_name("DEST");
  if (!cmd.read(argc, argv)) return 0;
  if (dest.empty())
    write_experiment_report(dir, std::cerr);
  else
    export_experiment(dir, dest, std::cerr);
  return 0;
}

}  // namespace yoke::cli
