#include "store/onnx_export.h"

#include <filesystem>

#include "util/error.h"
#include "util/json_file.h"

namespace fs = std::filesystem;

namespace yoke {

PythonExporter find_onnx_exporter() { return find_python_exporter("onnx", "yoke_onnx.py", "YOKE_ONNX_SCRIPT"); }

ExportResult export_onnx(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                         const PythonExporter& exporter, bool replace) {
  auto refuse_language_models = [&](const std::string& weights) {
    if (read_json((fs::path(weights) / "config.json").string()).value("task", "translate") == "lm")
      throw input_error(model_dir, 0, "--format onnx: is a language model; the ONNX export covers translation models "
                                      "(an encoder and a decoder step); --format safetensors exports any model");
    return std::vector<std::string>{};
  };
  return export_with_python(model_dir, out_dir, checkpoint_name, exporter, refuse_language_models, "decoder.onnx",
                            replace);
}

}  // namespace yoke
