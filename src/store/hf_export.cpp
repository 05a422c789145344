#include "store/hf_export.h"

#include <filesystem>

#include "config/config.h"
#include "store/safetensors.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fs = std::filesystem;

namespace yoke {

std::string hf_architecture(const Config& c) {
  const std::string why = "--format hf: ";
  if (c.task == Task::lm)
    throw InputError(why + "task = lm: the export covers translation models (Marian, Blenderbot); --format "
                           "safetensors exports any model");
  if (c.arch != Arch::transformer)
    throw InputError(why + "arch = " + name_of(c.arch) + ": Marian and Blenderbot have self-attention, not Wu et "
                           "al.'s convolutions");
  return c.norm == Norm::post ? "marian" : "blenderbot";
}

PythonExporter find_hf_exporter() { return find_python_exporter("hf", "yoke_hf.py", "YOKE_HF_SCRIPT"); }

ExportResult export_hf(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                       const PythonExporter& exporter, bool replace) {
  auto choose = [&](const std::string& weights) {
    const Config config = Config::from_json(read_json((fs::path(weights) / "config.json").string()));
    return std::vector<std::string>{hf_architecture(config)};
  };
  ExportResult r = export_with_python(model_dir, out_dir, checkpoint_name, exporter, choose, "model.safetensors", replace);
  // What the report counts is the file written: the architecture's tensors (k and v apart, the
  // embedding written once per role, the position table per side), not yoke's parameters.
  const SafeTensorsIndex written = read_safetensors_index(r.to);  // the header: no need to read the weights
  r.tensors = written.tensors.size();
  r.values = 0;
  for (const auto& [name, e] : written.tensors) {
    int64_t n = 1;
    for (const int64_t d : e.shape) n *= d;
    r.values += n;
  }
  return r;
}

}  // namespace yoke
