#include "store/int8_model.h"

#include "util/error.h"

namespace yoke {

namespace {
constexpr const char* kInt8Prefix = "int8.";
constexpr int kInt8Format = 1;
}  // namespace

bool is_int8_meta(const nlohmann::json& meta) { return meta.contains("int8"); }
bool is_int8_checkpoint(const Checkpoint& ckpt) { return is_int8_meta(ckpt.meta); }

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
    if (name != "output") ckpt.tensors[model_tensor_name(name)] = w.dequantized();
  }
  if (!out.count("output")) throw input_error(origin, 0, "int8 checkpoint lacks its output matrix 'int8.output'");
  return out;
}

void put_int8_weights(Checkpoint& ckpt, const Int8Weights& weights, const nlohmann::json& about) {
  ckpt.meta["int8"] = about;
  ckpt.meta["int8"]["format"] = kInt8Format;
  for (const auto& [name, w] : weights) {
    ckpt.tensors[kInt8Prefix + name + ".values"] = w.values;
    ckpt.tensors[kInt8Prefix + name + ".scales"] = w.scales;
  }
}

}  // namespace yoke
