#include "store/onnx_export.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "util/error.h"
#include "util/json_file.h"
#include "util/staged_dir.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

// What the exporter imports, each with the Debian package that provides it.
const std::vector<std::pair<std::string, std::string>> kPythonModules = {
    {"torch", "python3-torch"}, {"onnx", "python3-onnx"}, {"sentencepiece", "python3-sentencepiece"}};

// The first module of kPythonModules that `python` cannot import, or -1 (one interpreter start).
int first_missing_module(const std::string& python) {
  std::string code = "import importlib, sys\nfor i, m in enumerate([";
  for (const auto& m : kPythonModules) code += "'" + m.first + "', ";
  code += "]):\n    try: importlib.import_module(m)\n    except Exception: sys.exit(10 + i)\n";
  const int status = run_inheriting_output({python, "-c", code});
  if (status == 0) return -1;
  return status >= 10 && status < 10 + int(kPythonModules.size()) ? status - 10 : 0;
}

fs::path executable_dir() {
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace

OnnxTools find_onnx_tools() {
  OnnxTools t;
  const char* python = std::getenv("YOKE_PYTHON");
  t.python = python && *python ? python : YOKE_BUILD_PYTHON;
  if (const char* script = std::getenv("YOKE_ONNX_SCRIPT"); script && *script) {
    t.script = script;
  } else {
    const fs::path exe = executable_dir();
    for (const fs::path& candidate : {exe / "python/yoke_onnx.py", exe / "../python/yoke_onnx.py",
                                      exe / "../share/yoke/python/yoke_onnx.py",
                                      fs::path(YOKE_BUILD_SOURCE_DIR) / "python/yoke_onnx.py"})
      if (fs::exists(candidate)) {
        t.script = fs::weakly_canonical(candidate).string();
        break;
      }
    if (t.script.empty())
      throw InputError("--format onnx: cannot find python/yoke_onnx.py beside the yoke executable (" + exe.string() +
                       ") or in " + YOKE_BUILD_SOURCE_DIR + "; set YOKE_ONNX_SCRIPT to its path");
  }
  if (!fs::exists(t.python))
    throw InputError("--format onnx needs Python 3 with PyTorch and ONNX: " + t.python +
                     " does not exist (Debian: apt-get install python3-torch python3-onnx python3-sentencepiece; "
                     "or set YOKE_PYTHON to an interpreter that has them)");
  if (const int missing = first_missing_module(t.python); missing >= 0)
    throw InputError("--format onnx: " + t.python + " cannot import " + kPythonModules[missing].first +
                     " (Debian: apt-get install " + kPythonModules[missing].second +
                     "; or set YOKE_PYTHON to an interpreter that has it)");
  return t;
}

ExportResult export_onnx(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                         const OnnxTools& tools, bool replace) {
  // Written into a staged sibling and renamed into place: a refusal, a failed exporter or a crash
  // leaves no folder behind, and an existing one is replaced only when asked (util/staged_dir.h).
  StagedDirectory staged(out_dir, replace, "yoke export");
  // The exporter's input, a safetensors copy of the weights, lives in the staged folder too: a kill
  // leaves it beside --out (removed by the next export there), not in /tmp for good.
  const auto weights = fs::path(staged.path()) / ".weights";
  ExportResult r = export_model(model_dir, weights.string(), checkpoint_name);
  if (read_json((weights / "config.json").string()).value("task", "translate") == "lm")
    throw input_error(model_dir, 0, "--format onnx: is a language model; the ONNX export covers translation models "
                                    "(an encoder and a decoder step); --format safetensors exports any model");
  const int status = run_inheriting_output({tools.python, tools.script, weights.string(), staged.path()});
  if (status != 0)
    throw InputError("--format onnx: " + tools.python + " " + tools.script + " failed (exit status " +
                     std::to_string(status) + "; its message is above)");
  fs::remove_all(weights);
  r.files.clear();
  for (const auto& entry : fs::directory_iterator(staged.path()))
    if (entry.path().filename() != "decoder.onnx") r.files.push_back(entry.path().filename().string());
  std::sort(r.files.begin(), r.files.end());
  staged.commit();
  r.to = (fs::path(out_dir) / "decoder.onnx").string();
  return r;
}

}  // namespace yoke
