// `yoke experiment`: a grid of runs in, the papers' tables and figures out.
#include <algorithm>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "experiment/runner.h"
#include "train/trainer.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_experiment(int argc, char** argv) {
  Command cmd("experiment",
              "Runs every (variant, seed) of a grid — train, average the last checkpoints if asked, translate\n"
              "the test sets, score, analyse — then writes report.md/.csv/.json/.html with the table and the\n"
              "pictures. Finished runs are skipped, so after Ctrl-C or a crash the same command continues.\n"
              "The grid format is described in configs/grids/README.md.\n\n"
              "example: yoke experiment --grid configs/grids/seed001-ende.grid --out experiments/seed001");
  ExperimentOptions o;
  std::string variants;
  int threads = 0;
  bool report_only = false;
  cmd.add_option("--grid", o.grid_path, "the grid file")->type_name("FILE")->required();
  cmd.add_option("--out", o.out_dir, "output directory (runs/ and the report)")->type_name("DIR")->required();
  add_overrides_option(cmd, o.overrides, "config override for every run (after the grid)");
  CLI::Option* threads_given = add_value(cmd, "--threads", threads, "N", "CPU threads per run")->default_str("the config's");
  add_value(cmd, "--nproc", o.nproc, "N", "train each run on N data-parallel workers on this machine (Gloo over 127.0.0.1)");
  cmd.add_option("--variants", variants, "run (and report) only these variants of the grid")
      ->type_name("A,B,...")
      ->default_str("all");
  cmd.add_option("--seeds", o.seeds, "run (and report) only these of the grid's seeds")
      ->type_name("S,S,...")
      ->delimiter(',')
      ->default_str("all");
  cmd.add_flag("--report-only", report_only, "rebuild the report from the finished runs, run nothing");
  if (!cmd.read(argc, argv)) return 0;
  o.command = "yoke";
  for (int i = 1; i < argc; ++i) o.command += std::string(" ") + argv[i];
  if (*threads_given) o.threads = threads;
  if (o.nproc < 1) throw InputError("--nproc must be at least 1, got " + std::to_string(o.nproc));
  for (size_t start = 0; start <= variants.size() && !variants.empty();) {
    const size_t comma = std::min(variants.find(',', start), variants.size());
    if (comma > start) o.variants.push_back(variants.substr(start, comma - start));
    start = comma + 1;
  }
  if (report_only) {
    write_experiment_report(o.grid_path, o.out_dir, o.overrides, std::cerr, o.variants, o.seeds, o.command);
    return 0;
  }
  install_stop_handlers();
  return run_experiment(o, std::cerr);
}

}  // namespace yoke::cli
