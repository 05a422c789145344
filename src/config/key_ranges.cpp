#include "config/key_ranges.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace yoke {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr KeyRange at_least(double lo) { return {lo, kInf, false, true}; }
constexpr KeyRange positive() { return {0, kInf, true, true}; }
constexpr KeyRange unit_open() { return {0, 1, false, true}; }  // [0, 1): rates and β
constexpr KeyRange closed(double lo, double hi) { return {lo, hi, false, false}; }

const std::map<std::string, KeyRange>& ranges() {
  static const std::map<std::string, KeyRange> table = {
      // task and data
      {"src_vocab_size", at_least(0)}, {"tgt_vocab_size", at_least(0)}, {"lm_block", at_least(0)},
      // model sizes
      {"encoder_layers", at_least(0)}, {"decoder_layers", at_least(1)}, {"d_model", positive()},
      {"heads", positive()}, {"ffn_dim", positive()}, {"dropout", unit_open()}, {"attention_dropout", unit_open()},
      {"activation_dropout", unit_open()}, {"max_positions", positive()},
      // convolutions
      {"conv_weight_dropout", unit_open()},
      // embeddings (α = 0 cuts the input path off: an experiment, not an error)
      {"factored_rank", at_least(0)}, {"input_grad_scale", at_least(0)}, {"bridging_weight", at_least(0)}, {"lambda_lm", closed(0, 1)},
      {"lambda_wf", closed(0, 1)}, {"lambda_ur", closed(0, 1)},
      // optimisation
      {"max_tokens", positive()}, {"update_freq", at_least(1)}, {"lr", positive()}, {"warmup", at_least(0)},
      {"adam_beta1", unit_open()}, {"adam_beta2", unit_open()}, {"adam_eps", positive()},
      {"weight_decay", at_least(0)}, {"label_smoothing", unit_open()}, {"clip_norm", at_least(0)},
      {"max_epochs", at_least(0)}, {"max_updates", at_least(0)}, {"max_minutes", at_least(0)},
      {"seed", at_least(0)}, {"threads", closed(0, 4096)}, {"dist_timeout", positive()},
      {"dist_bucket_mb", positive()},
      // validation, checkpoints, early stopping
      {"valid_interval", at_least(0)}, {"valid_bleu_sentences", at_least(0)}, {"patience", at_least(0)},
      {"save_interval", at_least(0)}, {"keep_last", at_least(1)}, {"log_interval", at_least(1)},
      // decoding: a beam past a few hundred only burns time (a 10000-beam took 2 minutes a sentence)
      {"beam", closed(1, 1024)}, {"lenpen", closed(0, 10)}, {"max_len_a", at_least(0)}, {"max_len_b", at_least(0)},
  };
  return table;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

const KeyRange* key_range(const std::string& key) {
  const auto it = ranges().find(key);
  return it == ranges().end() ? nullptr : &it->second;
}

bool in_range(const KeyRange& r, double v) {
  if (std::isnan(v)) return false;
  const bool above = r.lo_open ? v > r.lo : v >= r.lo;
  const bool below = r.hi_open ? v < r.hi : v <= r.hi;
  return above && below;
}

std::string range_text(const KeyRange& r) {
  if (std::isinf(r.hi)) {
    if (r.lo == 0 && r.lo_open) return "positive";
    return (r.lo_open ? "> " : ">= ") + number(r.lo);
  }
  return "in " + std::string(r.lo_open ? "(" : "[") + number(r.lo) + ", " + number(r.hi) + (r.hi_open ? ")" : "]");
}

}  // namespace yoke
