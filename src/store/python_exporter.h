// Exports written by a Python script over the safetensors export (`yoke export --format onnx` runs
// python/yoke_onnx.py, `--format hf` python/yoke_hf.py): maintained exporters (PyTorch's ONNX
// exporter) instead of hand-written ones. This side finds the interpreter and the script, names the
// Debian package of a missing module, and stages the output so that it is written whole or not at all.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "store/model_export.h"

namespace yoke {

struct PythonExporter {
  std::string format;  // "onnx", "hf": for messages (--format F)
  std::string python;  // an interpreter with torch, onnx and sentencepiece (Debian's /usr/bin/python3)
  std::string script;  // the script's path
};

// The interpreter: $YOKE_PYTHON, else the build's. The script `script_name`: $`script_env`, else
// python/`script_name` beside or above the executable's directory, under share/yoke/, else in the
// source tree the binary was built from. InputError naming what is missing and the package that
// provides it, before any work.
PythonExporter find_python_exporter(const std::string& format, const std::string& script_name,
                                    const std::string& script_env);

// Exports the checkpoint of `model_dir` (as export_model picks it) through `exporter` into `out_dir`,
// written whole or not at all; an `out_dir` that is not empty is refused unless `replace`. The script
// runs as `python script ARGS... WEIGHTS OUT`, where WEIGHTS is a safetensors export in the staged
// folder and ARGS what `arguments` returns for it: it reads WEIGHTS/config.json and may refuse the
// model (throw InputError) before the script runs. `main_file` is the file the result reports.
ExportResult export_with_python(const std::string& model_dir, const std::string& out_dir,
                                const std::string& checkpoint_name, const PythonExporter& exporter,
                                const std::function<std::vector<std::string>(const std::string& weights_dir)>& arguments,
                                const std::string& main_file, bool replace);

}  // namespace yoke
