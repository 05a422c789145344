// `yoke experiment`: a grid of runs in, the papers' tables and figures out.
#include <algorithm>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "experiment/runner.h"
#include "train/trainer.h"

namespace yoke::cli {

int cmd_experiment(int argc, char** argv) {
  Args args("experiment",
            "Runs every (variant, seed) of a grid — train, average the last checkpoints if asked, translate\n"
            "the test sets, score, analyse — then writes report.md/.csv/.json/.html with the table and the\n"
            "pictures. Finished runs are skipped, so after Ctrl-C or a crash the same command continues.\n"
            "The grid format is described in configs/grids/README.md.\n\n"
            "example: yoke experiment --grid configs/grids/seed001-ende.grid --out experiments/seed001",
            {{"grid", "FILE", "the grid file"},
             {"out", "DIR", "output directory (runs/ and the report)"},
             {"set", "KEY=VALUE", "config override for every run (after the grid)", "", true},
             {"threads", "N", "CPU threads per run", "the config's"},
             {"variants", "A,B,...", "run (and report) only these variants of the grid", "all"},
             {"report-only", "", "rebuild the report from the finished runs, run nothing"}});
  if (!args.parse(argc, argv, 2)) return 0;
  ExperimentOptions o;
  o.grid_path = args.require("grid");
  o.out_dir = args.require("out");
  o.overrides = args.all("set");
  if (args.has("threads")) o.threads = args.get_int("threads");
  if (args.has("variants")) {
    std::string list = args.get("variants");
    for (size_t start = 0; start <= list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) o.variants.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  if (args.flag("report-only")) {
    write_experiment_report(o.grid_path, o.out_dir, o.overrides, std::cerr, o.variants);
    return 0;
  }
  install_stop_handlers();
  return run_experiment(o, std::cerr);
}

}  // namespace yoke::cli
