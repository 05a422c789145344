// Checkpoints in yoke's own format: a JSON header (config, trainer state, tensor index) and the
// raw tensor bytes. No pickling, so LibTorch 1.13 and 2.x read each other's files. Written to a
// temporary file, flushed to disk and renamed, so a crash never leaves a torn checkpoint.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "compat/torch.h"

namespace yoke {

struct Checkpoint {
  nlohmann::json meta;                     // free-form: config, trainer state, ...
  std::map<std::string, at::Tensor> tensors;
};

void save_checkpoint(const std::string& path, const Checkpoint& ckpt);
Checkpoint load_checkpoint(const std::string& path);  // InputError naming the file when unreadable

// Numbered checkpoints, checkpoint_u<update>.ykp, hold weights only: for averaging and evaluation.
std::string numbered_checkpoint_name(int64_t update);
// Those in `dir` as (update, path), oldest first; other files are ignored.
std::vector<std::pair<int64_t, std::string>> numbered_checkpoints(const std::string& dir);

// Every parameter and buffer of a module by its dotted name (shared ones once).
std::map<std::string, at::Tensor> module_state(const torch::nn::Module& m);
// Copies tensors into the module; missing or mis-shaped entries are an InputError naming `origin`.
void load_module_state(torch::nn::Module& m, const std::map<std::string, at::Tensor>& state,
                       const std::string& origin);

}  // namespace yoke
