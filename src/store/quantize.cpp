#include "store/quantize.h"

#include <filesystem>

#include "store/int8_model.h"
#include "store/model_store.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {

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
  put_int8_weights(ck, weights,
                   {{"from", r.from}, {"scheme", "int8 weights, one symmetric scale per row; activations quantized per call"}});
  std::map<std::string, at::Tensor> fp32;
  for (const auto& [name, t] : module_state(*m.model))
    if (!weights.count(name)) { fp32[name] = t; r.fp32_values += t.numel(); }
  put_model_weights(ck, fp32);
  for (const auto& [name, w] : weights) {
    r.int8_values += w.values.numel();
    ++r.int8_weights;
  }

  fs::create_directories(out);
  r.files = copy_model_files(dir, out);
  r.to = (fs::path(out) / "checkpoint_best.ykp").string();
  save_checkpoint(r.to, ck);
  return r;
}

}  // namespace yoke
