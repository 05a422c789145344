// Exact resumption from save_dir/checkpoint_last.ykp: what a resume refuses, what it loads,
// and the repair of a checkpoint_best that a kill left behind.
#pragma once
#include <optional>
#include <ostream>

#include <nlohmann/json_fwd.hpp>

#include "config/config.h"
#include "train/train_state.h"

namespace yoke {

class FlatAdam;
class Transformer;

// Before anything is written: a checkpoint_last that cannot be resumed with this run's config,
// data (vocab_checksums: of the data's vocabularies) or pair file is an InputError; keys that
// may change and did are logged.
void check_resume(const Config& cfg, const nlohmann::json& vocab_checksums, std::ostream& log);

// Loads checkpoint_last's weights and optimizer state into model and opt and returns its loop
// state; nullopt when there is none. world: the ranks of this run (for a note when the
// batches per update changed).
std::optional<LoopState> resume(const Config& cfg, int world, Transformer& model, FlatAdam& opt, std::ostream& log);

// checkpoint_best must hold the update the trainer state records as best: a kill between
// writing checkpoint_last and copying it to checkpoint_best leaves the older one behind.
void repair_best(const Config& cfg, const LoopState& st, std::ostream& log);

}  // namespace yoke
