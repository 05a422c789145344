#include <iostream>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "decode/translator.h"
#include "train/local_launch.h"
#include "train/process_group.h"
#include "train/trainer.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_train(int argc, char** argv) {
  Command cmd("train",
              "Trains a model on a data directory from `yoke prepare`. Checkpoints, metrics.jsonl and the\n"
              "vocabularies go to save_dir; if save_dir already holds checkpoint_last.ykp the run resumes\n"
              "from it exactly. Ctrl-C saves a checkpoint and stops (a second Ctrl-C exits at once).\n\n"
              "Data parallel: --nproc N starts N workers on this machine; under torchrun\n"
              "(torchrun --no-python --nproc-per-node N [--nnodes M ...] yoke train --config C) the workers read\n"
              "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT. An update takes update_freq batches on each rank;\n"
              "rank 0 alone logs and writes save_dir. See docs/distributed.md.");
  ConfigOptions config(cmd);
  int nproc = 1;
  add_value(cmd, "--nproc", nproc, "N", "data-parallel workers on this machine (Gloo over 127.0.0.1); 1 = this process");
  if (!cmd.read(argc, argv) || config.print_requested_table()) return 0;
  const Config cfg = config.read();  // a bad config is reported once, before any worker starts
  if (nproc < 1) throw InputError("--nproc must be at least 1, got " + std::to_string(nproc));
  if (nproc > 1) {
    if (read_distributed_env().distributed())
      throw InputError("--nproc " + std::to_string(nproc) + " inside a distributed launch (WORLD_SIZE is set): use one or the other");
    if (!distributed_training_available())
      throw InputError("--nproc needs c10d's Gloo, which this yoke was built without (install libgloo-dev and rebuild)");
    // The workers run this same command without --nproc.
    std::vector<std::string> args;
    for (int i = 0; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--nproc") { ++i; continue; }
      if (a.rfind("--nproc=", 0) == 0) continue;
      args.push_back(a);
    }
    return run_local_workers(nproc, args, std::cerr);
  }
  install_stop_handlers();
  auto r = train(cfg, std::cerr, greedy_validation_decode);
  return r.stop_reason == "interrupted" ? 128 + stop_signal() : 0;
}

}  // namespace yoke::cli
