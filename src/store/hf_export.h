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
// estimator folds. Where the architecture has one input table and yoke reads two (separate
// vocabularies, shared-private's materialized rows; Blenderbot with tie none or decoder, the
// default), the table holds them as two blocks of ids, the target's after the source's, and the
// bias is −inf on the source block of lm_head (python/yoke_hf.py, hf_tensors). M2M100 and MBart are
// not used: M2M100 computes its sinusoids from positions offset by pad + 1, MBart normalizes the
// embeddings.
#pragma once
#include <string>

#include "store/python_exporter.h"

namespace yoke {

struct Config;

// "marian" (norm = post) or "blenderbot" (pre) for a translation model of `config`, or InputError
// naming what neither computes: a language model, arch lightconv/dynamicconv.
std::string hf_architecture(const Config& config);

// python/yoke_hf.py ($YOKE_HF_SCRIPT) and its interpreter (find_python_exporter).
PythonExporter find_hf_exporter();

// Exports the checkpoint of `model_dir` (as export_model picks it) into `out_dir`, written whole or
// not at all; an `out_dir` that is not empty is refused unless `replace`. A model hf_architecture
// refuses is refused before the exporter runs.
ExportResult export_hf(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                       const PythonExporter& exporter, bool replace = false);

}  // namespace yoke
