// `yoke train`: the training loop. Batches by token count, label-smoothed cross-entropy,
// Adam with warm-up and inverse-square-root decay, clipping, gradient accumulation, validation
// (loss and BLEU), early stopping, atomic checkpoints, exact resumption, Ctrl-C saves.
#pragma once
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "train/stop_signal.h"  // install_stop_handlers, stop_requested, stop_signal

namespace yoke {
class Transformer;
}

namespace yoke {

struct TrainResult {
  int64_t updates = 0;
  int epochs = 0;
  double best = 0;             // best validation metric (BLEU or loss)
  std::string stop_reason;     // "max_updates", "max_epochs", "max_minutes", "early stopping", "interrupted"
  double tokens_per_s = 0;     // source + target tokens per second of training
  double train_seconds = 0;
  double comm_wait_s = 0;      // distributed: this session's time spent waiting on the other ranks
};

// Decodes validation sources (subword ids without eos) into target ids, for validation BLEU.
// Decoding sits above training in the stage order, so the caller hands it in
// (decode/batched_decoding.h: greedy_validation_decode); without one, validation reports loss only.
using ValidationDecoder = std::function<std::vector<std::vector<int>>(
    Transformer& model, const std::vector<std::vector<int>>& sources, double max_len_a, int max_len_b)>;

// Resumes from save_dir/checkpoint_last.ykp when present.
TrainResult train(Config cfg, std::ostream& log, const ValidationDecoder& decode = {});

}  // namespace yoke
