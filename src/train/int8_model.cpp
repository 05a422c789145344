#include "train/int8_model.h"

#include <filesystem>

#include "train/model_store.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {

namespace {
constexpr const char* kInt8Prefix = "int8.";
constexpr int kInt8Format = 1;
}  // namespace

bool is_int8_checkpoint(const Checkpoint& ckpt) { return ckpt.meta.contains("int8"); }

Int8Weights take_int8_weights(Checkpoint& ckpt, const std::string& origin) {
  Int8Weights out;
  const std::string prefix = kInt8Prefix;
  for (auto it = ckpt.tensors.begin(); it != ckpt.tensors.end();) {
    const std::string& key = it->first;
    if (key.rfind(prefix, 0) != 0) { ++it; continue; }
    const auto dot = key.rfind('.');
    const std::string name = key.substr(prefix.size(), dot - prefix.size()), part = key.substr(dot + 1);
    if (part == "values") out[name].values = it->second;
    else if (part == "scales") out[name].scales = it->second;
    else throw input_error(origin, 0, "unknown int8 tensor '" + key + "'");
    it = ckpt.tensors.erase(it);
  }
  for (auto& [name, w] : out) {
    if (!w.values.defined() || !w.scales.defined() || w.values.dim() != 2 || w.values.scalar_type() != at::kChar ||
        w.scales.numel() != w.values.size(0))
      throw input_error(origin, 0, "int8 tensor '" + name + "' needs int8 values [N, K] and N scales");
    if (name != "output") ckpt.tensors["model." + name] = w.dequantized();
  }
  if (!out.count("output")) throw input_error(origin, 0, "int8 checkpoint lacks its output matrix 'int8.output'");
  return out;
}

QuantizeResult quantize_model(const std::string& dir, const std::string& out, const std::string& checkpoint_name) {
  QuantizeResult r;
  if (fs::exists(fs::path(out) / "checkpoint_best.ykp") || fs::exists(fs::path(out) / "checkpoint_last.ykp"))
    throw input_error(out, 0, "already holds a model; give another --out");
  r.from = pick_checkpoint(dir, checkpoint_name);
  const Checkpoint original = load_checkpoint(r.from);
  if (is_int8_checkpoint(original)) throw input_error(r.from, 0, "is already an int8 model (written by `yoke quantize`)");
  LoadedModel m = load_model(dir, checkpoint_name, "cpu");
  const Int8Weights weights = m.model->quantize_int8();

  Checkpoint ck;
  ck.meta["config"] = original.meta.at("config");
  if (original.meta.contains("vocab")) ck.meta["vocab"] = original.meta.at("vocab");  // the files copied below
  ck.meta["int8"] = {{"format", kInt8Format}, {"from", r.from},
                     {"scheme", "int8 weights, one symmetric scale per row; activations quantized per call"}};
  for (const auto& [name, t] : module_state(*m.model))
    if (!weights.count(name)) { ck.tensors["model." + name] = t; r.fp32_values += t.numel(); }
  for (const auto& [name, w] : weights) {
    ck.tensors[kInt8Prefix + name + ".values"] = w.values;
    ck.tensors[kInt8Prefix + name + ".scales"] = w.scales;
    r.int8_values += w.values.numel();
    ++r.int8_weights;
  }

  fs::create_directories(out);
  for (const char* f : {"spm.model", "spm.vocab", "spm.src.model", "spm.src.vocab", "spm.tgt.model", "spm.tgt.vocab",
                        "pairs.tsv"}) {
    const auto src = fs::path(dir) / f;
    if (!fs::exists(src)) continue;
    fs::copy_file(src, fs::path(out) / f, fs::copy_options::overwrite_existing);
    r.files.push_back(f);
  }
  r.to = (fs::path(out) / "checkpoint_best.ykp").string();
  save_checkpoint(r.to, ck);
  return r;
}

}  // namespace yoke
