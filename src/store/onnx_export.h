// `yoke export --format onnx`: the model as ONNX graphs (an encoder, and a decoder step with its
// cache) with its vocabularies and decoding settings, docs/export.md "ONNX". The graphs are built
// by python/yoke_onnx.py with PyTorch's exporter over python/yoke_torch.py (a maintained exporter
// instead of a hand-written one); this side writes the safetensors export it reads into a
// temporary directory, runs it and says which Debian package is missing when it cannot.
#pragma once
#include <string>

#include "store/model_export.h"

namespace yoke {

struct OnnxTools {
  std::string python;  // an interpreter with torch, onnx and sentencepiece (Debian's /usr/bin/python3)
  std::string script;  // python/yoke_onnx.py
};

// Where they are: $YOKE_PYTHON, else the build's interpreter; $YOKE_ONNX_SCRIPT, else
// python/yoke_onnx.py beside or above the executable's directory, else in the source tree the
// binary was built from. InputError naming what is missing and the package that provides it.
OnnxTools find_onnx_tools();

// Exports the checkpoint of `model_dir` (as export_model picks it) into `out_dir`, written whole or
// not at all; an `out_dir` that is not empty is refused unless `replace`. A language model is refused
// (InputError) before the exporter runs.
ExportResult export_onnx(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                         const OnnxTools& tools, bool replace = false);

}  // namespace yoke
