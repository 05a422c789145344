// `yoke train`: the training loop. Batches by token count, label-smoothed cross-entropy,
// Adam with warm-up and inverse-square-root decay, clipping, gradient accumulation, validation
// (loss and BLEU), early stopping, atomic checkpoints, exact resumption, Ctrl-C saves.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "util/config.h"

namespace yoke {

struct TrainResult {
  int64_t updates = 0;
  int epochs = 0;
  double best = 0;             // best validation metric (BLEU or loss)
  std::string stop_reason;     // "max_updates", "max_epochs", "max_minutes", "early stopping", "interrupted"
  double tokens_per_s = 0;     // source + target tokens per second of training
  double train_seconds = 0;
};

// Fills vocabulary sizes from the data directory's meta.json when cfg.data is set.
void fill_vocab_sizes(Config& cfg);

// Resumes from save_dir/checkpoint_last.ykp when present.
TrainResult train(Config cfg, std::ostream& log);

// Installs SIGINT/SIGTERM handlers that ask the loop to save and stop (a second signal exits).
void install_stop_handlers();
bool stop_requested();

}  // namespace yoke
