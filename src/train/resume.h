// Where a run starts: exact resumption from save_dir/checkpoint_last.ykp (what a resume refuses,
// what it loads, and the repair of a checkpoint_best that a kill left behind), or the weights of
// another trained model (init_from: fine-tuning, with a new optimizer state and schedule).
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "config/config.h"
#include "train/train_state.h"

namespace yoke {

class FlatAdam;
class Transformer;

// Before anything is written: a checkpoint_last that cannot be resumed with this run's config,
// data (vocab_checksums: of the data's vocabularies; train_checksums: text/data_meta.h's
// training_files_checksums, against what the checkpoint records) or pair file is an InputError;
// keys that may change and did are logged.
void check_resume(const Config& cfg, const nlohmann::json& vocab_checksums, const nlohmann::json& train_checksums,
                  std::ostream& log);

// Loads checkpoint_last's weights and optimizer state into model and opt and returns its loop
// state; nullopt when there is none. world: the ranks of this run (for a note when the
// batches per update changed).
std::optional<LoopState> resume(const Config& cfg, int world, Transformer& model, FlatAdam& opt, std::ostream& log);

// checkpoint_best must hold the update the trainer state records as best: a kill between
// writing checkpoint_last and copying it to checkpoint_best leaves the older one behind.
void repair_best(const Config& cfg, const LoopState& st, std::ostream& log);

// Whether Trainer::save writes a numbered (weights-only) copy beside checkpoint_last for a save of
// this reason: at validations and save intervals, for averaging.
bool saves_numbered_copy(const std::string& reason);

// The numbered checkpoint of checkpoint_last's update, when that update saved one: a kill after
// checkpoint_last was written and before its weights-only copy leaves it missing, and averaging
// would then take another set of checkpoints than the run without the kill.
void repair_numbered(const Config& cfg, const LoopState& st, std::ostream& log);

// The model a run starts from (init_from): the checkpoint file, and the update and data it was
// trained to, for the log and metrics.jsonl.
struct InitSource {
  std::string checkpoint;
  int64_t update = -1;  // -1: not recorded (an averaged or imported checkpoint)
  std::string data;     // the data directory it was trained on, as its config says
  nlohmann::json to_json() const;
};

// Before anything is written, for a run that does not resume: nullopt without init_from; else
// the checkpoint to start from (init_from names a model directory, whose checkpoint_best.ykp or
// else checkpoint_last.ykp is taken, or a .ykp file). An InputError when it cannot start this run:
// an int8 model, a key that defines the model (heads, tie, output, ...) set otherwise, other
// vocabularies than the data's (vocab_checksums; both files named), another pair file, or
// init_from naming save_dir itself.
std::optional<InitSource> check_init_from(const Config& cfg, const nlohmann::json& vocab_checksums);

// Copies the weights of `from` into the model (the optimizer's moments and the schedule start
// afresh) and says so in the log.
void load_init_weights(const InitSource& from, Transformer& model, std::ostream& log);

}  // namespace yoke
