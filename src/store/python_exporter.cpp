#include "store/python_exporter.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "util/error.h"
#include "util/executable_dir.h"
#include "util/staged_dir.h"
#include "util/subprocess.h"
#include "util/remove_tree.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

// What the exporters import, each with the Debian package that provides it.
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

}  // namespace

PythonExporter find_python_exporter(const std::string& format, const std::string& script_name,
                                    const std::string& script_env) {
  PythonExporter t;
  t.format = format;
  const std::string flag = "--format " + format;
  const char* python = std::getenv("YOKE_PYTHON");
  t.python = python && *python ? python : YOKE_BUILD_PYTHON;
  if (const char* script = std::getenv(script_env.c_str()); script && *script) {
    t.script = script;
  } else {
    const fs::path exe = executable_dir(), in_python = fs::path("python") / script_name;
    for (const fs::path& candidate : {exe / in_python, exe / ".." / in_python, exe / "../share/yoke" / in_python,
                                      fs::path(YOKE_BUILD_SOURCE_DIR) / in_python})
      if (fs::exists(candidate)) {
        t.script = fs::weakly_canonical(candidate).string();
        break;
      }
    if (t.script.empty())
      throw InputError(flag + ": cannot find " + in_python.string() + " beside the yoke executable (" + exe.string() +
                       ") or in " + YOKE_BUILD_SOURCE_DIR + "; set " + script_env + " to its path");
  }
  if (!fs::exists(t.python))
    throw InputError(flag + " needs Python 3 with PyTorch and ONNX: " + t.python +
                     " does not exist (Debian: apt-get install python3-torch python3-onnx python3-sentencepiece; "
                     "or set YOKE_PYTHON to an interpreter that has them)");
  if (const int missing = first_missing_module(t.python); missing >= 0)
    throw InputError(flag + ": " + t.python + " cannot import " + kPythonModules[missing].first +
                     " (Debian: apt-get install " + kPythonModules[missing].second +
                     "; or set YOKE_PYTHON to an interpreter that has it)");
  return t;
}

ExportResult export_with_python(const std::string& model_dir, const std::string& out_dir,
                                const std::string& checkpoint_name, const PythonExporter& exporter,
                                const std::function<std::vector<std::string>(const std::string&)>& arguments,
                                const std::string& main_file, bool replace) {
  // Written into a staged sibling and renamed into place: a refusal, a failed exporter or a crash
  // leaves no folder behind, and an existing one is replaced only when asked (util/staged_dir.h).
  StagedDirectory staged(out_dir, replace, "yoke export", {{"--model", model_dir}});
  // The exporter's input, a safetensors copy of the weights, lives in the staged folder too: a kill
  // leaves it beside --out (removed by the next export there), not in /tmp for good.
  const auto weights = fs::path(staged.path()) / ".weights";
  ExportResult r = export_model(model_dir, weights.string(), checkpoint_name);
  std::vector<std::string> command = {exporter.python, exporter.script};
  for (auto& a : arguments(weights.string())) command.push_back(std::move(a));
  command.push_back(weights.string());
  command.push_back(staged.path());
  const int status = run_inheriting_output(command);
  if (status != 0)
    throw InputError("--format " + exporter.format + ": " + exporter.python + " " + exporter.script +
                     " failed (exit status " + std::to_string(status) + "; its message is above)");
  if (const std::string failed = remove_tree(weights.string()); !failed.empty())
    throw InputError("cannot remove the intermediate weights: " + failed);
  r.files.clear();
  for (const auto& entry : fs::recursive_directory_iterator(staged.path())) {
    const auto name = fs::relative(entry.path(), staged.path()).string();
    if (entry.is_regular_file() && name != main_file) r.files.push_back(name);
  }
  std::sort(r.files.begin(), r.files.end());
  staged.commit();
  r.to = (fs::path(out_dir) / main_file).string();
  return r;
}

}  // namespace yoke
