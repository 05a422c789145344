// `yoke export --format hf`: a translation model as a Hugging Face model directory that
// transformers.js runs (docs/export.md, "Hugging Face"): config.json, generation_config.json,
// model.safetensors under the architecture's tensor names, tokenizer.json and the ONNX graphs
// transformers.js loads (onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx), written by
// python/yoke_hf.py (store/python_exporter.h).
//
// The architecture is the one that computes the model exactly: post-norm → Marian (MarianMTModel),
// pre-norm → Blenderbot (BlenderbotForConditionalGeneration: pre-norm layers, final encoder and
// decoder norms, a position table read from the weights). Both add a stored position table to
// √d-scaled (or unscaled) embeddings, have ReLU feed-forward layers, biases on every projection (the
// keys' is written as zeros: yoke's keys have none) and lm_head + final_logits_bias, into which every
// estimator folds. M2M100 and MBart are not used: M2M100 computes its sinusoids from positions offset
// by pad + 1, MBart normalizes the embeddings.
#pragma once
#include <string>

#include "store/python_exporter.h"

namespace yoke {

struct Config;

// "marian" or "blenderbot" for a model of `config` whose source and target share one vocabulary
// (`joint_vocabulary`), or InputError naming the setting that neither architecture can express:
// a language model, arch lightconv/dynamicconv, separate vocabularies (tie = shared-private has
// them), or norm = pre with separate source and target input embeddings (tie none or decoder:
// Blenderbot, like every pre-norm translation architecture of transformers.js, has one input
// embedding for both sides).
std::string hf_architecture(const Config& config, bool joint_vocabulary);

// python/yoke_hf.py ($YOKE_HF_SCRIPT) and its interpreter (find_python_exporter).
PythonExporter find_hf_exporter();

// Exports the checkpoint of `model_dir` (as export_model picks it) into `out_dir`, written whole or
// not at all; an `out_dir` that is not empty is refused unless `replace`. A model hf_architecture
// refuses is refused before the exporter runs.
ExportResult export_hf(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                       const PythonExporter& exporter, bool replace = false);

}  // namespace yoke
