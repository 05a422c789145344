#include "store/hf_export.h"

#include <filesystem>

#include "config/config.h"
#include "store/safetensors.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fs = std::filesystem;

namespace yoke {

std::string hf_architecture(const Config& c, bool joint_vocabulary) {
  const std::string why = "--format hf: ";
  if (c.task == Task::lm)
    throw InputError(why + "task = lm: the export covers translation models (Marian, Blenderbot); --format "
                           "safetensors exports any model");
  if (c.arch != Arch::transformer)
    throw InputError(why + "arch = " + name_of(c.arch) + ": Marian and Blenderbot have self-attention, not Wu et "
                           "al.'s convolutions");
  if (c.tie == Tie::shared_private || !joint_vocabulary)
    throw InputError(why + (c.tie == Tie::shared_private ? "tie = shared-private needs separate vocabularies, and "
                                                           : "separate source and target vocabularies: ") +
                     "a Hugging Face model directory has one tokenizer for both sides (prepare with --joint)");
  if (c.norm == Norm::post) return "marian";
  if (c.tie != Tie::all && c.tie != Tie::src_tgt)
    throw InputError(why + "tie = " + name_of(c.tie) + " with norm = pre: Blenderbot, the pre-norm architecture "
                           "transformers.js runs (like M2M100 and MBart), reads one input embedding for encoder and "
                           "decoder; train with tie = all or src-tgt, or norm = post (Marian)");
  return "blenderbot";
}

PythonExporter find_hf_exporter() { return find_python_exporter("hf", "yoke_hf.py", "YOKE_HF_SCRIPT"); }

ExportResult export_hf(const std::string& model_dir, const std::string& out_dir, const std::string& checkpoint_name,
                       const PythonExporter& exporter, bool replace) {
  auto choose = [&](const std::string& weights) {
    const Config config = Config::from_json(read_json((fs::path(weights) / "config.json").string()));
    const std::string arch = hf_architecture(config, fs::exists(fs::path(weights) / "spm.model"));
    return std::vector<std::string>{arch};
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
