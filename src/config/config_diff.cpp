#include "config/config_diff.h"

#include <algorithm>

namespace yoke {
namespace {

// Keys that define the model: its shapes, what its layers compute, its vocabularies. Neither a
// resumed run nor one that starts from another model's weights (init_from) may change them.
const char* const kModelKeys[] = {
    "task", "src_vocab_size", "tgt_vocab_size", "joint_vocab", "arch", "encoder_layers", "decoder_layers",
    "d_model", "heads", "ffn_dim", "norm", "positions", "max_positions", "encoder_kernels", "decoder_kernels",
    "conv_glu", "conv_weight_softmax", "tie", "output", "embed_scale", "factored_rank", "cross_layer",
    "lambda_lm", "lambda_wf", "lambda_ur", "bridging"};

// A resumed run keeps those and early_stop_metric, as the recorded best (a BLEU or a loss) would
// be compared with the other metric. Dropout rates, input_grad_scale and the optimiser's
// settings act on training only and may change.
bool fixed_on_resume(const std::string& key) {
  return key == "early_stop_metric" || defines_model(key);
}

// As a config file writes the value; an empty text as "", so that the arrow has two sides.
std::string text(const nlohmann::json& v) {
  if (!v.is_string()) return v.dump();
  return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
}

}  // namespace

bool defines_model(const std::string& key) {
  return std::find(std::begin(kModelKeys), std::end(kModelKeys), key) != std::end(kModelKeys);
}

bool may_change_on_resume(const std::string& key) {
  const auto& keys = config_keys();
  if (std::none_of(keys.begin(), keys.end(), [&](const ConfigKey& k) { return k.name == key; })) return false;
  return !fixed_on_resume(key);
}

std::vector<ConfigChange> config_changes(const Config& before, const Config& after) {
  const nlohmann::json a = before.to_json(), b = after.to_json();
  std::vector<ConfigChange> out;
  for (const auto& k : config_keys()) {
    const auto& x = a.at(k.name);
    const auto& y = b.at(k.name);
    if (x != y) out.push_back({k.name, text(x), text(y), may_change_on_resume(k.name)});
  }
  return out;
}

std::string describe_changes(const std::vector<ConfigChange>& changes) {
  std::string out;
  for (const auto& c : changes) out += (out.empty() ? "" : ", ") + c.key + " " + c.before + " → " + c.after;
  return out;
}

}  // namespace yoke
