#include "store/quantize.h"

#include <filesystem>

#include "store/int8_model.h"
#include "store/model_files.h"
#include "store/model_store.h"
#include "util/error.h"
#include "util/staged_dir.h"

namespace fs = std::filesystem;

namespace yoke {

QuantizeResult quantize_model(const std::string& dir, const std::string& out, const std::string& checkpoint_name,
                              bool replace) {
  QuantizeResult r;
  // Written beside --out and renamed into place (util/staged_dir.h): never into a folder that holds
  // something else, and nothing left behind by an error or a kill.
  StagedDirectory staged(out, replace, "yoke quantize", {{"--model", dir}});
  r.from = pick_checkpoint(dir, checkpoint_name);
  const nlohmann::json meta = read_model_meta(r.from);  // the header alone: load_model reads the weights
  if (is_int8_meta(meta)) throw input_error(r.from, 0, "is already an int8 model (written by `yoke quantize`)");
  LoadedModel m = load_model(dir, checkpoint_name, "cpu", ModelUse::read_weights);
  const Int8Weights weights = m.model->quantize_int8();

  Checkpoint ck;
  ck.meta["config"] = meta.at("config");
  if (meta.contains("vocab")) ck.meta["vocab"] = meta.at("vocab");  // the files copied below
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

  r.files = copy_model_files(dir, staged.path());
  save_checkpoint((fs::path(staged.path()) / kCheckpointBest).string(), ck);
  r.replaced = staged.commit();
  r.to = (fs::path(out) / kCheckpointBest).string();
  return r;
}

}  // namespace yoke
