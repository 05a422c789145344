// `yoke export --format onnx`: the model as ONNX graphs (an encoder, and a decoder step with its
// cache) with its vocabularies and decoding settings, docs/export.md "ONNX". The graphs are built
// by python/yoke_onnx.py with PyTorch's exporter over python/yoke_torch.py (store/python_exporter.h).
#pragma once
#include <string>

#include "store/python_exporter.h"

namespace yoke {

// python/yoke_onnx.py ($YOKE_ONNX_SCRIPT) and its interpreter (find_python_exporter).
PythonExporter find_onnx_exporter();

// Exports the checkpoint of `model_dir` (as export_model picks it) into `out_dir`, written whole or
// not at all; an `out_dir` that is not empty is refused unless `replace`. A language model is refused
// (InputError) before the exporter runs.
ExportResult export_onnx(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                         const PythonExporter& exporter, bool replace = false);

}  // namespace yoke
