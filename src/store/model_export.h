// Models that leave yoke and come back: `yoke export` writes a model directory's weights as
// model.safetensors (store/safetensors.h) beside config.json and the vocabularies, in the layout
// docs/export.md documents; `yoke import` (or any command given the exported directory) reads it.
//   tensors   one per parameter or buffer, named as the model names them ("embeddings.shared.weight",
//             "decoder0.self_attn.q_weight", ...); a matrix tied between roles is one parameter, stored once
//   metadata  format ("yoke"), format_version, config (the model's config as JSON text), vocab
//             (the vocabularies' CRC-32s), tying (the tensor prefix each role reads: source, target,
//             output), and where the weights came from (checkpoint, update)
// An int8 model directory (`yoke quantize`) is refused: its weights are rounded, and other
// toolkits would read the rounded values as a model; export the fp32 model it came from.
// This header holds no LibTorch types, so the command line's file stays light.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

struct Checkpoint;

constexpr const char* kExportedWeights = "model.safetensors";

struct ExportResult {
  std::string from, to;            // the file read and the file written
  size_t tensors = 0;
  int64_t values = 0;
  std::vector<std::string> files;  // written beside the weights: config.json, vocabularies, pairs.tsv
  bool replaced = false;           // out_dir held something that `replace` let go
};

// Exports the checkpoint `checkpoint_name` of `model_dir` (default: checkpoint_best, else
// checkpoint_last) into `out_dir`, written whole or not at all (util/staged_dir.h): an out_dir
// that is not empty is refused unless `replace`.
ExportResult export_model(const std::string& model_dir, const std::string& out_dir,
                          const std::string& checkpoint_name = "", bool replace = false);

// The reverse: an exported directory (or its model.safetensors) becomes a model directory with a
// weights-only checkpoint_best.ykp, the vocabularies and pairs.tsv, checked to load.
ExportResult import_model(const std::string& exported, const std::string& out_dir, bool replace = false);

// An exported model.safetensors as the checkpoint it came from (meta: config, vocab; tensors
// "model.NAME"), for load_model. InputError naming the file when it was not written by export_model.
Checkpoint read_exported_model(const std::string& path);

}  // namespace yoke
