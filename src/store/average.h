// Averaging the weights of the newest numbered checkpoints (checkpoint_u<update>.ykp) of a model
// directory into one checkpoint: a cheap ensemble that usually adds a little BLEU.
#pragma once
#include <string>
#include <vector>

namespace yoke {

// Averages the last `n` numbered checkpoints of `dir` (all of them when fewer exist) into
// dir/out_name; returns the files averaged, oldest first. InputError when there are none or
// they belong to different models, when out_name is one of the trainer's names (checkpoint_last,
// checkpoint_best, checkpoint_u<N>), or when another yoke process holds the output directory's
// lock (a trainer running there).
std::vector<std::string> average_checkpoints(const std::string& dir, int n, const std::string& out_name);

}  // namespace yoke
