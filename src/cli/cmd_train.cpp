#include <iostream>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "decode/translator.h"
#include "train/trainer.h"

namespace yoke::cli {

int cmd_train(int argc, char** argv) {
  Command cmd("train",
              "Trains a model on a data directory from `yoke prepare`. Checkpoints, metrics.jsonl and the\n"
              "vocabularies go to save_dir; if save_dir already holds checkpoint_last.ykp the run resumes\n"
              "from it exactly. Ctrl-C saves a checkpoint and stops (a second Ctrl-C exits at once).");
  ConfigOptions config(cmd);
  if (!cmd.read(argc, argv) || config.print_requested_table()) return 0;
  const Config cfg = config.read();
  install_stop_handlers();
  auto r = train(cfg, std::cerr, greedy_validation_decode);
  return r.stop_reason == "interrupted" ? 128 + stop_signal() : 0;
}

}  // namespace yoke::cli
