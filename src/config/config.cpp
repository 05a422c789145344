#include "config/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>

#include "util/error.h"

namespace yoke {
namespace {

// One place lists every key: setting, printing and serialising all walk this list.
template <class C, class F>
void visit_fields(C& c, F&& f) {
  f("task", c.task); f("data", c.data); f("save_dir", c.save_dir);
  f("src_vocab_size", c.src_vocab_size); f("tgt_vocab_size", c.tgt_vocab_size);
  f("joint_vocab", c.joint_vocab); f("lm_block", c.lm_block);
  f("encoder_layers", c.encoder_layers); f("decoder_layers", c.decoder_layers);
  f("d_model", c.d_model); f("heads", c.heads); f("ffn_dim", c.ffn_dim);
  f("dropout", c.dropout); f("attention_dropout", c.attention_dropout);
  f("activation_dropout", c.activation_dropout); f("norm", c.norm);
  f("positions", c.positions); f("max_positions", c.max_positions);
  f("tie", c.tie); f("output", c.output); f("embed_scale", c.embed_scale);
  f("factored_rank", c.factored_rank); f("cross_layer", c.cross_layer);
  f("input_grad_scale", c.input_grad_scale);
  f("lambda_lm", c.lambda_lm); f("lambda_wf", c.lambda_wf); f("lambda_ur", c.lambda_ur);
  f("pairs", c.pairs);
  f("max_tokens", c.max_tokens); f("update_freq", c.update_freq); f("lr", c.lr);
  f("warmup", c.warmup); f("adam_beta1", c.adam_beta1); f("adam_beta2", c.adam_beta2);
  f("adam_eps", c.adam_eps); f("weight_decay", c.weight_decay);
  f("label_smoothing", c.label_smoothing); f("clip_norm", c.clip_norm);
  f("max_epochs", c.max_epochs); f("max_updates", c.max_updates); f("max_minutes", c.max_minutes);
  f("seed", c.seed); f("threads", c.threads); f("device", c.device); f("amp", c.amp);
  f("valid_interval", c.valid_interval); f("valid_bleu", c.valid_bleu);
  f("valid_bleu_sentences", c.valid_bleu_sentences); f("patience", c.patience);
  f("early_stop_metric", c.early_stop_metric); f("save_interval", c.save_interval);
  f("keep_last", c.keep_last); f("log_interval", c.log_interval); f("log_grad_paths", c.log_grad_paths);
  f("beam", c.beam); f("lenpen", c.lenpen); f("max_len_a", c.max_len_a); f("max_len_b", c.max_len_b);
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

InputError bad(const std::string& where, const std::string& msg) {
  return InputError(where.empty() ? msg : where + ": " + msg);
}

void parse_into(const std::string& v, std::string& out, const std::string&, const std::string&) { out = v; }
void parse_into(const std::string& v, int& out, const std::string& key, const std::string& where) {
  size_t used = 0;
  try { out = std::stoi(v, &used); } catch (...) { used = 0; }
  if (used != v.size() || v.empty()) throw bad(where, key + " expects a whole number, got '" + v + "'");
}
void parse_into(const std::string& v, double& out, const std::string& key, const std::string& where) {
  size_t used = 0;
  try { out = std::stod(v, &used); } catch (...) { used = 0; }
  if (used != v.size() || v.empty() || !std::isfinite(out))
    throw bad(where, key + " expects a number, got '" + v + "'");
}
void parse_into(const std::string& v, bool& out, const std::string& key, const std::string& where) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") out = true;
  else if (v == "false" || v == "0" || v == "no" || v == "off") out = false;
  else throw bad(where, key + " expects true or false, got '" + v + "'");
}

void require_one_of(const std::string& key, const std::string& v, std::initializer_list<const char*> ok) {
  std::string list;
  for (const char* o : ok) {
    if (v == o) return;
    list += std::string(list.empty() ? "" : ", ") + o;
  }
  throw InputError(key + " = '" + v + "' is not one of: " + list);
}

// Edit distance, for "did you mean" on misspelt keys.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] != b[j - 1])});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

void Config::set(const std::string& key, const std::string& value, const std::string& where) {
  bool found = false;
  std::string k = key;
  std::replace(k.begin(), k.end(), '-', '_');
  visit_fields(*this, [&](const char* name, auto& field) {
    if (k == name) { parse_into(value, field, k, where); found = true; }
  });
  if (found) return;
  std::string best;
  size_t best_d = 4;
  for (const auto& name : keys())
    if (size_t d = distance(k, name); d < best_d) { best_d = d; best = name; }
  throw bad(where, "unknown key '" + key + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)") +
                       "; `yoke train --help` lists the keys");
}

std::vector<std::string> Config::keys() {
  std::vector<std::string> out;
  Config c;
  visit_fields(c, [&](const char* name, auto&) { out.push_back(name); });
  return out;
}

nlohmann::json Config::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  visit_fields(*this, [&](const char* name, const auto& field) { j[name] = field; });
  return j;
}

Config Config::from_json(const nlohmann::json& j) {
  Config c;
  visit_fields(c, [&](const char* name, auto& field) {
    if (j.contains(name)) j.at(name).get_to(field);
  });
  return c;
}

void Config::validate() const {
  require_one_of("task", task, {"translate", "lm"});
  require_one_of("norm", norm, {"pre", "post"});
  require_one_of("positions", positions, {"sinusoidal", "learned"});
  require_one_of("tie", tie, {"none", "decoder", "all", "src-tgt", "shared-private"});
  require_one_of("output", output, {"dot", "l2", "square", "distance", "cosine"});
  require_one_of("embed_scale", embed_scale, {"sqrt", "1"});
  require_one_of("device", device, {"cpu", "cuda", "auto"});
  require_one_of("early_stop_metric", early_stop_metric, {"bleu", "loss"});
  auto positive = [](const char* k, double v) {
    if (!(v > 0)) throw InputError(std::string(k) + " must be positive, got " + std::to_string(v));
  };
  positive("d_model", d_model); positive("heads", heads); positive("ffn_dim", ffn_dim);
  positive("max_tokens", max_tokens); positive("update_freq", update_freq); positive("lr", lr);
  positive("max_positions", max_positions); positive("beam", beam);
  if (d_model % heads != 0)
    throw InputError("d_model (" + std::to_string(d_model) + ") must be divisible by heads (" +
                     std::to_string(heads) + ")");
  if (encoder_layers < 0 || decoder_layers < 1) throw InputError("need encoder_layers >= 0 and decoder_layers >= 1");
  if (dropout < 0 || dropout >= 1) throw InputError("dropout must be in [0, 1)");
  if (label_smoothing < 0 || label_smoothing >= 1) throw InputError("label_smoothing must be in [0, 1)");
  if (factored_rank < 0) throw InputError("factored_rank must be >= 0");
  if (lm_block < 0) throw InputError("lm_block must be >= 0 (0 = one sentence per row)");
  if (task == "lm" && lm_block >= max_positions)
    throw InputError("lm_block (" + std::to_string(lm_block) + ") must be below max_positions (" +
                     std::to_string(max_positions) + ")");
  for (double l : {lambda_lm, lambda_wf, lambda_ur})
    if (l < 0 || l > 1) throw InputError("lambda_lm/lambda_wf/lambda_ur must be in [0, 1]");
}

Config load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw input_error(path, 0, "cannot open config file");
  Config cfg;
  std::string line;
  size_t no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) throw input_error(path, no, "expected 'key = value', got '" + line + "'");
    std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    cfg.set(key, value, path + ":" + std::to_string(no));
  }
  return cfg;
}

void apply_overrides(Config& cfg, const std::vector<std::string>& overrides, const std::string& where) {
  for (const auto& kv : overrides) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) throw bad(where, "expected key=value, got '" + kv + "'");
    cfg.set(trim(kv.substr(0, eq)), trim(kv.substr(eq + 1)), where);
  }
}

}  // namespace yoke
