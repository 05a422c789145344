#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "decode/batched_decoding.h"
#include "store/run_folder.h"
#include "train/local_launch.h"
#include "train/process_group.h"
#include "train/trainer.h"
#include "util/dir_lock.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_train(int argc, char** argv) {
  Command cmd("train",
              "Trains a model on a data directory from `yoke prepare`. Checkpoints, metrics.jsonl and the\n"
              "vocabularies go to save_dir; if save_dir already holds checkpoint_last.ykp the run resumes\n"
              "from it exactly. Ctrl-C saves a checkpoint and stops (a second Ctrl-C exits at once). A save_dir that\n"
              "holds another run's checkpoints but no checkpoint_last.ykp is refused (the new run would mix with\n"
              "them); --force removes that run's files (checkpoints, metrics.jsonl, vocabularies, pairs) first.\n\n"
              "Data parallel: --nproc N starts N workers on this machine; under torchrun\n"
              "(torchrun --no-python --nproc-per-node N [--nnodes M ...] yoke train --config C) the workers read\n"
              "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT. An update takes update_freq batches on each rank;\n"
              "rank 0 alone logs and writes save_dir. See docs/distributed.md.");
  ConfigOptions config(cmd);
  int nproc = 1;
  bool force = false;
  add_value(cmd, "--nproc", nproc, "N", "data-parallel workers on this machine (Gloo over 127.0.0.1); 1 = this process");
  cmd.add_flag("--force", force,
               "start over: remove the files of an earlier run in save_dir (checkpoints, metrics.jsonl, vocabularies, "
               "pairs; nothing else) before training, also when it could resume");
  if (!cmd.read(argc, argv) || config.print_requested_table()) return 0;
  const Config cfg = config.read();  // a bad config is reported once, before any worker starts
  if (nproc < 1) throw InputError("--nproc must be at least 1, got " + std::to_string(nproc));
  // Once, by the process that will write save_dir (rank 0, or this one), before any worker starts.
  if (force && read_distributed_env().rank == 0 && std::filesystem::is_directory(cfg.save_dir)) {
    const DirLock lock(lock_file_in(cfg.save_dir), cfg.save_dir);  // not under a run still going there
    clear_run_folder(cfg.save_dir, std::cerr);
  }
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
      if (a.rfind("--nproc=", 0) == 0 || a == "--force") continue;  // --force is done above, once
      args.push_back(a);
    }
    return run_local_workers(nproc, args, std::cerr);
  }
  install_stop_handlers();
  auto r = train(cfg, std::cerr, greedy_validation_decode);
  return r.stop_reason == "interrupted" ? 128 + stop_signal() : 0;
}

}  // namespace yoke::cli
