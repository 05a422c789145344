// The run configuration: one flat set of named keys, read from a readable `key = value` file
// and overridable from the command line (`--set key=value` or `--key value`).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace yoke {

struct Config {
  // --- task and data
  std::string task = "translate";    // translate | lm
  std::string data;                  // directory written by `yoke prepare`
  std::string save_dir = "runs/model";
  int src_vocab_size = 0;            // taken from the data when 0 (`yoke params` may set them)
  int tgt_vocab_size = 0;
  bool joint_vocab = false;
  int lm_block = 0;                  // task = lm: 0 = one sentence per row (padded); N = stream blocks of N tokens

  // --- model sizes
  int encoder_layers = 3;
  int decoder_layers = 3;
  int d_model = 256;
  int heads = 4;
  int ffn_dim = 1024;
  double dropout = 0.1;
  double attention_dropout = 0.0;
  double activation_dropout = 0.0;
  std::string norm = "pre";          // pre | post
  std::string positions = "sinusoidal";  // sinusoidal | learned
  int max_positions = 1024;

  // --- embeddings (the sharing schemes; design.md tables)
  std::string tie = "decoder";       // none | decoder | all | src-tgt | shared-private
  std::string output = "dot";        // dot | l2 | square | distance | cosine
  std::string embed_scale = "sqrt";  // sqrt | 1
  int factored_rank = 0;             // 0 = full matrices
  bool cross_layer = false;
  double input_grad_scale = 1.0;
  double lambda_lm = 0.9, lambda_wf = 0.7, lambda_ur = 0.5;
  std::string pairs;                 // shared-private pair file

  // --- optimisation
  int max_tokens = 4096;             // per batch, padded tokens of the longer side
  int update_freq = 1;
  double lr = 1e-3;
  int warmup = 4000;
  double adam_beta1 = 0.9, adam_beta2 = 0.98, adam_eps = 1e-8;
  double weight_decay = 0.0;
  double label_smoothing = 0.1;
  double clip_norm = 0.0;            // 0 = no clipping
  int max_epochs = 0;                // 0 = no limit
  int max_updates = 0;
  double max_minutes = 0;
  int seed = 1;
  int threads = 0;                   // 0 = all cores
  std::string device = "cpu";        // cpu | cuda | auto
  bool amp = true;                   // on a GPU: bf16 autocast with fp32 master weights (ignored on a CPU)

  // --- validation, checkpoints, early stopping
  int valid_interval = 1000;         // updates; 0 = once per epoch only
  bool valid_bleu = true;
  int valid_bleu_sentences = 0;      // 0 = all
  int patience = 0;                  // validations without improvement before stopping; 0 = off
  std::string early_stop_metric = "bleu";  // bleu | loss
  int save_interval = 0;             // updates between checkpoints; 0 = at each validation
  int keep_last = 5;
  int log_interval = 50;
  bool log_grad_paths = false;       // log the path-A / path-B gradient shares of every update

  // --- decoding defaults (also used by validation BLEU)
  int beam = 5;
  double lenpen = 1.0;
  double max_len_a = 1.2;
  int max_len_b = 10;

  // Sets one key from its text form; throws InputError(where, ...) on an unknown key or a bad value.
  void set(const std::string& key, const std::string& value, const std::string& where = "");
  nlohmann::json to_json() const;
  static Config from_json(const nlohmann::json&);
  // Checks combinations that single values cannot (e.g. d_model % heads); throws InputError.
  void validate() const;
  static std::vector<std::string> keys();
};

// Reads `key = value` lines ('#' starts a comment); errors name the file and line.
Config load_config_file(const std::string& path);

// Applies overrides "key=value" in order; `where` names their origin in error messages.
void apply_overrides(Config& cfg, const std::vector<std::string>& overrides, const std::string& where);

}  // namespace yoke
