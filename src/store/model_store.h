// A trained model on disk: a directory with checkpoints (config inside) and the vocabularies.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "store/checkpoint.h"
#include "model/transformer.h"
#include "text/vocab.h"

namespace yoke {

struct LoadedModel {
  Config config;
  std::shared_ptr<Transformer> model;
  Vocab src_vocab, tgt_vocab;  // the same model file when the vocabulary is joint (or an LM)
  std::string checkpoint;      // the file the weights came from
  bool int8 = false;           // an int8 model (`yoke quantize`, store/int8_model.h)
};

// The config a checkpoint's meta holds, checked (Config::validate); InputError naming `path`
// when it is missing or invalid.
Config checkpoint_config(const nlohmann::json& meta, const std::string& path);

// Fills vocabulary sizes (and joint_vocab) from the data directory's meta.json when cfg.data is set.
void fill_vocab_sizes(Config& cfg);

// A fresh, randomly initialised model for a config (vocabulary sizes must be set).
// `vocab_dir` (a data or model directory) is needed for tie = shared-private: the pair file
// names words, and the vocabularies turn them into ids.
std::shared_ptr<Transformer> build_model(const Config& cfg, const std::string& vocab_dir = "");
// The same model with its parameters left unset, no values drawn (embed/initial_values.h): for a
// caller that copies a value into every parameter and buffer next (load_module_state), or only
// counts them.
std::shared_ptr<Transformer> build_unset_model(const Config& cfg, const std::string& vocab_dir = "");

// The checkpoint to read in `dir`: `name` when given, else checkpoint_best, else checkpoint_last,
// else an exported model.safetensors (store/model_export.h).
std::string pick_checkpoint(const std::string& dir, const std::string& name);
// The same choice without a name: nothing when `dir` holds no model (a data set, say).
std::optional<std::string> find_checkpoint(const std::string& dir);

// A model file as a checkpoint: yoke's .ykp (store/checkpoint.h) or an exported .safetensors.
// Its weights and meta only: a .ykp's optimizer state (is_optimizer_tensor) is not read.
Checkpoint read_model_file(const std::string& path);
// Its meta alone (a .ykp's header is read without its tensors).
nlohmann::json read_model_meta(const std::string& path);

// What a model is loaded for. `decode` (on the CPU) also times and picks the products' kernels and
// packs the weights for them, a fraction of a second and a second copy of the layer weights that
// commands reading the weights only (export, quantize, inspect, analyze) do without.
enum class ModelUse { decode, read_weights };

// device: cpu, cuda or auto (see compat::device_from_name). When the checkpoint records the
// vocabularies' checksums (text/vocab_files.h), a vocabulary file of `dir` that differs is an
// InputError naming it and the checkpoint.
LoadedModel load_model(const std::string& dir, const std::string& checkpoint_name = "", const std::string& device = "cpu",
                       ModelUse use = ModelUse::decode);

// load_model, and an InputError when the model was trained for another task (an LM given to
// `yoke translate`, say).
LoadedModel load_model_for(Task task, const std::string& dir, const std::string& checkpoint_name = "",
                           const std::string& device = "cpu");

// Copies the files a model directory carries beside its weights (the vocabularies, and the pair
// file of tie = shared-private) from `from` into `to`; returns the names of those it found.
std::vector<std::string> copy_model_files(const std::string& from, const std::string& to);

// Vocabulary files of a model or data directory: spm.model, or spm.src.model + spm.tgt.model.
std::string source_vocab_path(const std::string& dir);
std::string target_vocab_path(const std::string& dir);

}  // namespace yoke
