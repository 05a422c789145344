// Checkpoints in yoke's own format: a JSON header (config, trainer state, tensor index) and the
// raw tensor bytes. No pickling, so LibTorch 1.13 and 2.x read each other's files. Written to a
// temporary file, flushed to disk and renamed, so a crash never leaves a torn checkpoint.
// Layout (version 2): "YOKECKP2", the header's length (uint64), the header's CRC-32 (uint32),
// the JSON header, the tensors; each tensor's index entry holds its own CRC-32. Version 1
// ("YOKECKP1", no header checksum) still loads.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
// InputError naming the file when it is unreadable, damaged (a checksum does not match) or its
// header is malformed. With `wanted`, only the tensors it names are read and checked: the others
// are left on disk (a decoder skips checkpoint_last's optimizer state, twice the weights' bytes).
using TensorFilter = std::function<bool(const std::string& name)>;
Checkpoint load_checkpoint(const std::string& path, const TensorFilter& wanted = {});

// The header alone (checked as load_checkpoint checks it), without reading the tensors: for
// looking at a large checkpoint's config and trainer state.
struct CheckpointHeader {
  nlohmann::json meta;
  std::vector<std::string> tensors;  // names, in the file's order
};
CheckpointHeader read_checkpoint_header(const std::string& path);

// Numbered checkpoints, checkpoint_u<update>.ykp, hold weights only: for averaging and evaluation.
std::string numbered_checkpoint_name(int64_t update);
// The update of a numbered checkpoint's file name; nothing for any other name.
std::optional<int64_t> numbered_checkpoint_update(const std::string& file_name);
// Those in `dir` as (update, path), oldest first; other files are ignored.
std::vector<std::pair<int64_t, std::string>> numbered_checkpoints(const std::string& dir);
// Removes all but the newest `keep` (at least 1) numbered checkpoints of `dir`.
void prune_numbered_checkpoints(const std::string& dir, int keep);

// The names of a checkpoint's tensors are owned here and in store/int8_model.h (int8 weights):
// a model parameter or buffer NAME is stored as "model.NAME".
std::string model_tensor_name(const std::string& parameter);
// The trainer's optimizer state, "optimizer.exp_avg" and "optimizer.exp_avg_sq" (train/trainer.cpp).
bool is_optimizer_tensor(const std::string& name);
// Attention layers of files written before November 2026 hold "X.kv_bias" [2d] (key bias, then
// value bias) where they now hold "X.v_bias" [d]: model_weights() reads the value half as
// X.v_bias and drops the key half, which shifts all of a query's scores alike and so changes no
// output beyond float rounding (model/attention.h).
bool is_legacy_kv_bias(const std::string& parameter);
// The model's tensors of a checkpoint, by parameter name (older names upgraded); and the other way.
std::map<std::string, at::Tensor> model_weights(const Checkpoint& ckpt);
void put_model_weights(Checkpoint& ckpt, const std::map<std::string, at::Tensor>& weights);

// Every parameter and buffer of a module by its dotted name (shared ones once).
std::map<std::string, at::Tensor> module_state(const torch::nn::Module& m);
// Copies tensors into the module; missing, mis-shaped or non-finite (NaN, Inf) entries are an
// InputError naming `origin`.
void load_module_state(torch::nn::Module& m, const std::map<std::string, at::Tensor>& state,
                       const std::string& origin);

}  // namespace yoke
