#include "store/hf_import.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "model/layers.h"
#include "store/checkpoint.h"
#include "store/model_files.h"
#include "store/model_store.h"
#include "store/safetensors.h"
#include "text/vocab.h"
#include "text/vocab_files.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/staged_dir.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

constexpr const char* kMarian = "marian";
constexpr const char* kBlenderbot = "blenderbot";

// What config.json says, in the terms of transformers' MarianConfig and BlenderbotConfig.
struct HfConfig {
  std::string model_type;  // kMarian (post-norm) or kBlenderbot (pre-norm, final norms)
  int64_t vocab = 0, d = 0, encoder_layers = 0, decoder_layers = 0, heads = 0, ffn = 0, max_positions = 0;
  bool scale_embedding = false;
  bool shared_inputs = true;  // one embedding for encoder and decoder (Marian's share_encoder_decoder_embeddings)
  bool tied_output = true;    // lm_head is the decoder's input embedding (tie_word_embeddings)
  int64_t pad = 0, eos = 0, decoder_start = 0;
  double dropout = 0.1, attention_dropout = 0, activation_dropout = 0;
};

// config.json's keys, each error naming the file and the key.
class ConfigFile {
 public:
  explicit ConfigFile(std::string path) : path_(std::move(path)), json_(read_json(path_)) {
    if (!json_.is_object()) throw input_error(path_, 0, "is not a JSON object (a Hugging Face config.json is one)");
  }
  const std::string& path() const { return path_; }
  bool has(const std::string& key) const { return json_.contains(key) && !json_.at(key).is_null(); }
  InputError refuse(const std::string& key, const std::string& why) const {
    return input_error(path_, 0, "\"" + key + "\" " + why);
  }
  std::string value_text(const std::string& key) const { return has(key) ? json_.at(key).dump() : "absent"; }
  std::string text(const std::string& key) const {
    if (!has(key)) throw refuse(key, "is missing");
    if (!json_.at(key).is_string()) throw refuse(key, "is " + json_.at(key).dump() + ", not a string");
    return json_.at(key).get<std::string>();
  }
  // Required: the sizes and ids a model is made of have no default worth guessing.
  int64_t integer(const std::string& key, int64_t at_least) const {
    if (!has(key)) throw refuse(key, "is missing: the import reads the model's sizes and special ids from config.json");
    const auto& v = json_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < at_least)
      throw refuse(key, "is " + v.dump() + ": expected a whole number of at least " + std::to_string(at_least));
    return v.get<int64_t>();
  }
  bool boolean(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!json_.at(key).is_boolean()) throw refuse(key, "is " + json_.at(key).dump() + ", not true or false");
    return json_.at(key).get<bool>();
  }
  double number(const std::string& key, double fallback) const {
    if (!has(key)) return fallback;
    if (!json_.at(key).is_number()) throw refuse(key, "is " + json_.at(key).dump() + ", not a number");
    return json_.at(key).get<double>();
  }

 private:
  std::string path_;
  nlohmann::json json_;
};

// Checked in the order a reader of config.json meets the model: the architecture, the layers' sizes,
// what they compute, then the embeddings and the special ids.
HfConfig read_config(const ConfigFile& f) {
  HfConfig c;
  c.model_type = f.text("model_type");
  if (c.model_type != kMarian && c.model_type != kBlenderbot)
    throw f.refuse("model_type", "is \"" + c.model_type + "\": yoke imports marian (MarianMTModel: post-norm) and "
                                 "blenderbot (BlenderbotForConditionalGeneration: pre-norm with final norms), the two "
                                 "architectures that compute its Transformer");
  const bool marian = c.model_type == kMarian;
  c.vocab = f.integer("vocab_size", 5);
  c.d = f.integer("d_model", 1);
  c.encoder_layers = f.integer("encoder_layers", 1);
  c.decoder_layers = f.integer("decoder_layers", 1);
  c.heads = f.integer("encoder_attention_heads", 1);
  if (const int64_t h = f.integer("decoder_attention_heads", 1); h != c.heads)
    throw f.refuse("decoder_attention_heads", "is " + std::to_string(h) + " and encoder_attention_heads " +
                                                  std::to_string(c.heads) + ": yoke's layers have one number of heads");
  c.ffn = f.integer("encoder_ffn_dim", 1);
  if (const int64_t n = f.integer("decoder_ffn_dim", 1); n != c.ffn)
    throw f.refuse("decoder_ffn_dim", "is " + std::to_string(n) + " and encoder_ffn_dim " + std::to_string(c.ffn) +
                                          ": yoke's layers have one feed-forward size (ffn_dim)");
  c.max_positions = f.integer("max_position_embeddings", 1);
  // transformers' default is gelu for both classes: a config without the key is not ReLU either.
  const std::string activation = f.has("activation_function") ? f.text("activation_function") : "gelu (absent)";
  if (activation != "relu")
    throw f.refuse("activation_function",
                   "is \"" + activation + "\": yoke's feed-forward layers compute ReLU (FeedForward in "
                   "src/model/layers.cpp, fused into its matrix products), so a model trained with another "
                   "activation (opus-mt's swish, i.e. SiLU; gelu) would translate differently");
  if (marian)
    for (const char* key : {"normalize_before", "normalize_embedding", "add_final_layer_norm"})
      if (f.boolean(key, false))
        throw f.refuse(key, "is true: transformers' Marian ignores it (post-norm layers, no embedding or final norm), "
                            "so these weights were made for another computation than the one it and yoke would run");
  c.scale_embedding = f.boolean("scale_embedding", false);  // both classes' default
  c.tied_output = f.boolean("tie_word_embeddings", true);   // PretrainedConfig's default
  if (marian) {
    c.shared_inputs = f.boolean("share_encoder_decoder_embeddings", true);
    if (f.has("decoder_vocab_size") && f.integer("decoder_vocab_size", 1) != c.vocab)
      throw f.refuse("decoder_vocab_size", "is " + f.value_text("decoder_vocab_size") + " and vocab_size " +
                                               std::to_string(c.vocab) + ": a separate target vocabulary; the "
                                               "import reads one vocabulary (vocab.json) for both sides");
  }
  c.pad = f.integer("pad_token_id", 0);
  c.eos = f.integer("eos_token_id", 0);
  c.decoder_start = f.integer("decoder_start_token_id", 0);
  c.dropout = f.number("dropout", 0.1);  // training settings only, for fine-tuning: both classes' defaults
  c.attention_dropout = f.number("attention_dropout", 0.0);
  c.activation_dropout = f.number("activation_dropout", 0.0);
  return c;
}

// model.safetensors' tensors, each taken once: one that nothing takes would be part of the model
// that yoke drops, so it is refused by name (check_all_taken).
class HfWeights {
 public:
  HfWeights(std::string path, std::string model_type)
      : path_(std::move(path)), model_type_(std::move(model_type)), file_(load_safetensors(path_)) {}
  const std::string& path() const { return path_; }
  std::optional<at::Tensor> maybe(const std::string& name, const std::vector<int64_t>& shape) {
    const auto it = file_.tensors.find(name);
    if (it == file_.tensors.end()) return std::nullopt;
    const at::Tensor& t = it->second;
    if (t.sizes().vec() != shape)
      throw input_error(path_, 0, "tensor '" + name + "' has shape " + c10::str(t.sizes()) + ", config.json gives " +
                                      c10::str(at::IntArrayRef(shape)));
    // Half and bfloat16 values are floats exactly; anything else is no weight of these architectures.
    const auto type = t.scalar_type();
    if (type != at::kFloat && type != at::kHalf && type != at::kBFloat16)
      throw input_error(path_, 0, "tensor '" + name + "' is " + std::string(c10::toString(type)) +
                                      ": the import reads F32, F16 and BF16 weights (as float32, exactly)");
    taken_.insert(name);
    return t.to(at::kFloat);
  }
  at::Tensor get(const std::string& name, const std::vector<int64_t>& shape) {
    if (auto t = maybe(name, shape)) return *t;
    throw input_error(path_, 0, "lacks tensor '" + name + "', which the " + model_type_ + " architecture has");
  }
  void ignore(const std::string& name) { taken_.insert(name); }
  void check_all_taken() const {
    for (const auto& [name, t] : file_.tensors)
      if (!taken_.count(name))
        throw input_error(path_, 0, "holds tensor '" + name + "', which " + model_type_ + " as yoke maps it has no "
                                    "place for (another architecture, or a layer config.json does not count): "
                                    "importing without it would change what the model computes");
  }

 private:
  std::string path_, model_type_;
  SafeTensors file_;
  std::set<std::string> taken_;
};

// Each side's rows in SentencePiece order: source_rows[id] is the embedding row of the piece that
// source.spm gives id `id` (vocab.json), target_rows[id] that of target.spm's (target_vocab.json
// where separate_vocabs says the target has its own map, else vocab.json: then target.spm must be
// source.spm).
struct HfVocabulary {
  std::vector<int64_t> source_rows, target_rows;
  fs::path source_spm, target_spm;
  bool joint = true;  // one SentencePiece model for both sides: yoke's joint vocabulary
};

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// `map_file`'s piece → row for every piece of `spm` (rows[id]), and each row's piece for messages.
struct PieceRows {
  std::vector<int64_t> rows;
  std::vector<std::string> piece_of_row;
};

PieceRows piece_rows(const fs::path& map_file, const Vocab& spm, const std::string& spm_name, int64_t vocab_size) {
  const auto json = read_json(map_file.string());
  if (!json.is_object()) throw input_error(map_file.string(), 0, "is not a JSON object of piece → row");
  if (int64_t(json.size()) != spm.size() || spm.size() > vocab_size)
    throw input_error(map_file.string(), 0,
                      "has " + std::to_string(json.size()) + " pieces, " + spm_name + " " + std::to_string(spm.size()) +
                          ", and config.json's vocab_size is " + std::to_string(vocab_size) +
                          ": every piece must have a row and every entry be a piece (yoke's output layer has a row "
                          "for each piece, and the softmax runs over all of them)");
  PieceRows r;
  r.piece_of_row.resize(size_t(vocab_size));
  for (const auto& [piece, row] : json.items()) {
    if (!row.is_number_integer() || row.get<int64_t>() < 0 || row.get<int64_t>() >= vocab_size)
      throw input_error(map_file.string(), 0, "gives " + in_quotes(piece) + " the row " + row.dump() +
                                                  ", not one of the embedding's 0.." + std::to_string(vocab_size - 1));
    auto& seen = r.piece_of_row[size_t(row.get<int64_t>())];
    if (!seen.empty())
      throw input_error(map_file.string(), 0, "gives " + in_quotes(seen) + " and " + in_quotes(piece) + " the same row " +
                                                  row.dump());
    seen = piece;
  }
  for (int id = 0; id < spm.size(); ++id) {
    const std::string piece = spm.piece(id);
    if (!json.contains(piece))
      throw input_error(map_file.string(), 0, "lacks " + in_quotes(piece) + ", id " + std::to_string(id) + " of " +
                                                  spm_name + ": that piece would have no row");
    r.rows.push_back(json.at(piece).get<int64_t>());
  }
  return r;
}

HfVocabulary read_vocabulary(const fs::path& dir, const HfConfig& c, const ConfigFile& config) {
  bool separate = false;
  const fs::path tokenizer_config = dir / "tokenizer_config.json";
  if (fs::exists(tokenizer_config)) {
    const auto t = read_json(tokenizer_config.string());
    separate = t.is_object() && t.contains("separate_vocabs") && t.at("separate_vocabs") == true;
  }
  HfVocabulary v;
  v.source_spm = dir / "source.spm";
  v.target_spm = dir / "target.spm";
  const fs::path vocab_json = dir / "vocab.json", target_json = dir / (separate ? "target_vocab.json" : "vocab.json");
  for (const auto& f : {v.source_spm, v.target_spm, vocab_json, target_json})
    if (!fs::exists(f))
      throw input_error(f.string(), 0, "not found: the import reads the opus-mt layout (source.spm, target.spm, "
                                       "vocab.json, and target_vocab.json with separate_vocabs); directories of "
                                       "`yoke export --format hf` have it since the import exists (export older "
                                       "ones again)");
  auto load = [](const fs::path& f) {
    try {
      return Vocab::load(f.string());
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + ". The import maps vocab.json's rows onto the SentencePiece ids and "
                       "cannot renumber the SentencePiece model itself");
    }
  };
  const Vocab src = load(v.source_spm), tgt = load(v.target_spm);
  const int at = first_difference(src, tgt);
  v.joint = at < 0;
  if (!v.joint && !separate)
    throw input_error(v.target_spm.string(), 0,
                      "differs from source.spm" +
                          (at < std::min(src.size(), tgt.size())
                               ? " at id " + std::to_string(at) + " (" + in_quotes(tgt.piece(at)) + ", " +
                                     in_quotes(src.piece(at)) + ")"
                               : " in size (" + std::to_string(tgt.size()) + ", " + std::to_string(src.size()) + ")") +
                          ", but tokenizer_config.json's separate_vocabs is not true: vocab.json would give both "
                          "models' pieces its rows, and neither of yoke's vocabularies computes that");
  if (!separate && src.size() != c.vocab)
    throw input_error(vocab_json.string(), 0,
                      "covers " + std::to_string(src.size()) + " of config.json's vocab_size " + std::to_string(c.vocab) +
                          " rows: with one vocabulary for both sides every row must be a SentencePiece piece (the "
                          "softmax runs over all of them)");
  const PieceRows source = piece_rows(vocab_json, src, "source.spm", c.vocab);
  const PieceRows target = separate ? piece_rows(target_json, tgt, "target.spm", c.vocab) : source;
  v.source_rows = source.rows;
  v.target_rows = target.rows;
  // The special ids config.json gives must be the rows of the target's pieces: the decoder starts
  // from <s> (Marian's opus-mt models start from <pad>), a sentence ends with </s>, padding is <pad>.
  const auto check = [&](const char* key, int64_t value, int yoke_id, const std::string& role) {
    if (value == v.target_rows[size_t(yoke_id)]) return;
    const std::string is = value < c.vocab && !target.piece_of_row[size_t(value)].empty()
                               ? " (" + target_json.filename().string() + "'s " +
                                     in_quotes(target.piece_of_row[size_t(value)]) + ")"
                               : "";
    throw config.refuse(key, "is " + std::to_string(value) + is + ": yoke's " + role + " is " +
                                 in_quotes(tgt.piece(yoke_id)) + ", row " + std::to_string(v.target_rows[size_t(yoke_id)]) +
                                 " in " + target_json.filename().string());
  };
  check("pad_token_id", c.pad, Vocab::pad, "padding");
  check("eos_token_id", c.eos, Vocab::eos, "end of sentence");
  check("decoder_start_token_id", c.decoder_start, Vocab::bos, "first decoder input");
  return v;
}

// MarianSinusoidalPositionalEmbedding._init_weight (modeling_marian.py): sin(pos / 10000^(2i/d)) in
// the first half, the cosines in the second, in double precision (numpy) rounded to float.
// transformers computes this table when it loads a Marian model and leaves it out when it saves one.
at::Tensor marian_positions(int64_t n, int64_t dim) {
  auto table = at::empty({n, dim}, at::kFloat);
  auto a = table.accessor<float, 2>();
  const int64_t sines = dim - dim / 2;
  for (int64_t pos = 0; pos < n; ++pos)
    for (int64_t j = 0; j < dim; ++j) {
      const int64_t i = j < sines ? j : j - sines;  // feature 2i (sines) or 2i + 1 (cosines): frequency index i
      const double angle = double(pos) / std::pow(10000.0, double(2 * i) / double(dim));
      a[pos][j] = float(j < sines ? std::sin(angle) : std::cos(angle));
    }
  return table;
}

// The source, target and output matrices in SentencePiece order (each side's rows), as
// transformers resolves them.
struct Matrices {
  at::Tensor source, target, output;
};

Matrices word_matrices(HfWeights& w, const HfConfig& c, const HfVocabulary& v) {
  const std::vector<int64_t> shape = {c.vocab, c.d};
  const std::string shared = "model.shared.weight", enc = "model.encoder.embed_tokens.weight",
                    dec = "model.decoder.embed_tokens.weight", head = "lm_head.weight";
  at::Tensor source, target, output;
  if (c.shared_inputs) {
    // One module under three names: transformers saves it once (model.shared) or under each.
    std::string first;
    for (const auto& name : {shared, enc, dec}) {
      const auto t = w.maybe(name, shape);
      if (!t) continue;
      if (first.empty()) {
        first = name;
        source = target = *t;
      } else if (!at::equal(*t, source)) {
        throw input_error(w.path(), 0, "tensors '" + first + "' and '" + name + "' differ, but " + c.model_type +
                                           (c.model_type == kMarian ? " with share_encoder_decoder_embeddings" : "") +
                                           " reads one embedding for encoder and decoder: transformers would keep "
                                           "only one of them");
      }
    }
    if (first.empty()) throw input_error(w.path(), 0, "lacks the word embedding ('" + shared + "')");
  } else {
    w.ignore(shared);  // transformers' Marian has no shared module then, and skips the tensor
    source = w.get(enc, shape);
    target = w.get(dec, shape);
  }
  if (c.tied_output) {
    if (const auto u = w.maybe(head, shape); u && !at::equal(*u, target))
      throw input_error(w.path(), 0, "tensor '" + head + "' differs from the decoder's input embedding, but "
                                     "config.json's tie_word_embeddings (true unless it says otherwise) has "
                                     "transformers replace it by that embedding");
    output = target;
  } else {
    output = w.get(head, shape);
  }
  // yoke's dot-product output layer has no bias (its distance estimator's −½‖w‖² is computed from
  // the weights, not stored): zero on the target's rows, and −inf on any other row (a source block,
  // python/yoke_hf.py), which the model then never emits, as yoke cannot.
  const at::Tensor target_rows = at::tensor(v.target_rows, at::kLong);
  auto bias = w.maybe("final_logits_bias", {1, c.vocab}).value_or(at::zeros({1, c.vocab}))[0];
  auto emitted = at::zeros({c.vocab}, at::kBool).index_fill_(0, target_rows, true);
  if (bias.index_select(0, target_rows).ne(0).any().item<bool>())
    throw input_error(w.path(), 0, "tensor 'final_logits_bias' is not zero on the target's rows: yoke's "
                                   "dot-product output layer has no bias (its distance estimator's −½‖w‖² is "
                                   "computed from the weights, not stored), so the logits would differ");
  if (const auto other = bias.masked_select(emitted.logical_not()); !other.eq(-INFINITY).all().item<bool>())
    throw input_error(w.path(), 0, "tensor 'final_logits_bias' is not −inf on the " + std::to_string(other.numel()) +
                                   " rows that are no piece of target.spm: the model can emit them, and yoke's output "
                                   "layer has a row for each target piece only");
  const at::Tensor source_rows = at::tensor(v.source_rows, at::kLong);
  return {source.index_select(0, source_rows), target.index_select(0, target_rows), output.index_select(0, target_rows)};
}

// The matrices that are equal bit for bit are one parameter in yoke: the tie that says so.
Tie tie_of(const Matrices& m) {
  const bool st = m.source.sizes() == m.target.sizes() && at::equal(m.source, m.target),
             tu = at::equal(m.target, m.output);
  if (st) return tu ? Tie::all : Tie::src_tgt;
  return tu ? Tie::decoder : Tie::none;  // source = output alone has no scheme: three matrices
}

void put_attention(HfWeights& w, std::map<std::string, at::Tensor>& t, const std::string& hf, const std::string& y,
                   int64_t d) {
  t[y + "q_weight"] = w.get(hf + "q_proj.weight", {d, d});
  t[y + "q_bias"] = w.get(hf + "q_proj.bias", {d});
  t[y + "kv_weight"] = at::cat({w.get(hf + "k_proj.weight", {d, d}), w.get(hf + "v_proj.weight", {d, d})}, 0);
  // yoke's keys have no bias: a key bias b adds q·b to every score of a query alike, which the
  // softmax cancels, so dropping it changes no output beyond float rounding (none for yoke's
  // exports, whose key biases are zeros).
  w.get(hf + "k_proj.bias", {d});
  t[y + "v_bias"] = w.get(hf + "v_proj.bias", {d});
  t[y + "out_weight"] = w.get(hf + "out_proj.weight", {d, d});
  t[y + "out_bias"] = w.get(hf + "out_proj.bias", {d});
}

void put_norm(HfWeights& w, std::map<std::string, at::Tensor>& t, const std::string& hf, const std::string& y, int64_t d) {
  t[y + "weight"] = w.get(hf + "weight", {d});
  t[y + "bias"] = w.get(hf + "bias", {d});
}

void put_layer(HfWeights& w, std::map<std::string, at::Tensor>& t, const std::string& hf, const std::string& y,
               const HfConfig& c, bool decoder) {
  const int64_t d = c.d;
  put_attention(w, t, hf + "self_attn.", y + "self_attn.", d);
  put_norm(w, t, hf + "self_attn_layer_norm.", y + "self_attn_norm.", d);
  if (decoder) {
    put_attention(w, t, hf + "encoder_attn.", y + "cross_attn.", d);
    put_norm(w, t, hf + "encoder_attn_layer_norm.", y + "cross_attn_norm.", d);
  }
  t[y + "ffn.w1"] = w.get(hf + "fc1.weight", {c.ffn, d});
  t[y + "ffn.b1"] = w.get(hf + "fc1.bias", {c.ffn});
  t[y + "ffn.w2"] = w.get(hf + "fc2.weight", {d, c.ffn});
  t[y + "ffn.b2"] = w.get(hf + "fc2.bias", {d});
  put_norm(w, t, hf + "final_layer_norm.", y + "ffn_norm.", d);
}

// The position table both sides add, and whether it is yoke's sinusoid (then positions =
// sinusoidal, the table kept as stored; another one is a learned table).
std::pair<at::Tensor, Positions> position_table(HfWeights& w, const HfConfig& c) {
  const std::vector<int64_t> shape = {c.max_positions, c.d};
  auto side = [&](const std::string& name) {
    if (auto t = w.maybe(name, shape)) return *t;
    if (c.model_type == kMarian) return marian_positions(c.max_positions, c.d);  // _keys_to_ignore_on_save
    return w.get(name, shape);
  };
  const std::string enc = "model.encoder.embed_positions.weight", dec = "model.decoder.embed_positions.weight";
  const at::Tensor table = side(enc);
  if (!at::equal(table, side(dec)))
    throw input_error(w.path(), 0, "tensors '" + enc + "' and '" + dec + "' differ: yoke adds one position table "
                                   "to both sides");
  // The tolerance allows for another machine's float sin and exp; other sinusoids (Marian's has
  // other frequencies) differ by far more.
  const bool yokes = (table - sinusoidal_positions(c.max_positions, c.d)).abs().max().item<double>() < 1e-5;
  return {table, yokes ? Positions::sinusoidal : Positions::learned};
}

}  // namespace

ExportResult import_hf(const std::string& hf_dir, const std::string& out, bool replace) {
  ExportResult r;
  const fs::path dir(hf_dir);
  if (!fs::is_directory(dir)) throw input_error(hf_dir, 0, "not a directory: give a Hugging Face model directory");
  check_out_apart(out, hf_dir, "--model");  // before reading hundreds of megabytes
  const ConfigFile config_file((dir / "config.json").string());
  const HfConfig hf = read_config(config_file);
  r.from = (dir / kExportedWeights).string();
  if (!fs::exists(r.from)) {
    if (fs::exists(dir / "pytorch_model.bin"))
      throw input_error((dir / "pytorch_model.bin").string(), 0,
                        "is a Python pickle (torch.save), which yoke does not read. Convert it to model.safetensors "
                        "(transformers: model.save_pretrained(DIR, safe_serialization=True))");
    throw input_error(r.from, 0, "not found: the import reads the weights from model.safetensors");
  }
  HfWeights w(r.from, hf.model_type);
  const HfVocabulary vocab = read_vocabulary(dir, hf, config_file);

  // Rows in SentencePiece order: yoke's id i reads the row vocab.json (target_vocab.json) gives its piece.
  const Matrices m = word_matrices(w, hf, vocab);
  const Tie tie = tie_of(m);
  const auto [positions, position_kind] = position_table(w, hf);
  std::map<std::string, at::Tensor> t;
  switch (tie) {
    case Tie::all: t["embeddings.shared.weight"] = m.source; break;
    case Tie::src_tgt:
      t["embeddings.shared.weight"] = m.source;
      t["embeddings.output.weight"] = m.output;
      break;
    case Tie::decoder:
      t["embeddings.source.weight"] = m.source;
      t["embeddings.target.weight"] = m.target;
      break;
    default:
      t["embeddings.source.weight"] = m.source;
      t["embeddings.target.weight"] = m.target;
      t["embeddings.output.weight"] = m.output;
  }
  t["positions"] = positions;
  for (int64_t i = 0; i < hf.encoder_layers; ++i)
    put_layer(w, t, "model.encoder.layers." + std::to_string(i) + ".", "encoder" + std::to_string(i) + ".", hf, false);
  for (int64_t i = 0; i < hf.decoder_layers; ++i)
    put_layer(w, t, "model.decoder.layers." + std::to_string(i) + ".", "decoder" + std::to_string(i) + ".", hf, true);
  if (hf.model_type == kBlenderbot) {
    put_norm(w, t, "model.encoder.layer_norm.", "encoder_norm.", hf.d);
    put_norm(w, t, "model.decoder.layer_norm.", "decoder_norm.", hf.d);
  }
  w.check_all_taken();

  Config c;
  c.task = Task::translate;
  c.arch = Arch::transformer;
  c.src_vocab_size = int(vocab.source_rows.size());
  c.tgt_vocab_size = int(vocab.target_rows.size());
  c.joint_vocab = vocab.joint;
  c.encoder_layers = int(hf.encoder_layers);
  c.decoder_layers = int(hf.decoder_layers);
  c.d_model = int(hf.d);
  c.heads = int(hf.heads);
  c.ffn_dim = int(hf.ffn);
  c.dropout = hf.dropout;
  c.attention_dropout = hf.attention_dropout;
  c.activation_dropout = hf.activation_dropout;
  c.norm = hf.model_type == kMarian ? Norm::post : Norm::pre;
  c.positions = position_kind;
  c.max_positions = int(hf.max_positions);
  c.tie = tie;
  c.output = Estimator::dot;  // the estimator of lm_head + a zero bias; yoke's exports fold theirs into lm_head
  c.embed_scale = hf.scale_embedding ? EmbedScale::sqrt : EmbedScale::one;
  try {
    c.validate();
  } catch (const InputError& e) {
    throw input_error(config_file.path(), 0, std::string("makes a yoke config that is not valid: ") + e.what());
  }
  // Built and filled here, so that a name or shape this mapping got wrong is an error before anything is written.
  auto model = build_unset_model(c);  // load_module_state fills every parameter and buffer or refuses
  load_module_state(*model, t, r.from);
  Checkpoint ck;
  const auto state = module_state(*model);
  if (state.size() != t.size())
    throw std::logic_error("import_hf: mapped " + std::to_string(t.size()) + " tensors for a model of " +
                           std::to_string(state.size()));
  put_model_weights(ck, state);
  for (const auto& [name, x] : state) r.values += x.numel();
  r.tensors = state.size();

  StagedDirectory staged(out, replace, "yoke import", {{"--model", hf_dir}});
  // yoke's vocabulary files (text/vocab_files.h): one model, or one a side.
  std::vector<std::pair<fs::path, std::string>> copies = {{vocab.source_spm, "spm.model"}};
  if (!vocab.joint) copies = {{vocab.source_spm, "spm.src.model"}, {vocab.target_spm, "spm.tgt.model"}};
  for (const auto& [from, name] : copies) {
    std::error_code ec;
    fs::copy_file(from, fs::path(staged.path()) / name, ec);
    if (ec)
      throw RunError("cannot copy " + from.string() + " to " + (fs::path(out) / name).string() + ": " + ec.message());
    r.files.push_back(name);
  }
  ck.meta = {{"config", c.to_json()},
             {"vocab", vocab_checksums(staged.path())},
             {"imported", {{"from", r.from}, {"format", "hf"}, {"model_type", hf.model_type}}}};
  save_checkpoint((fs::path(staged.path()) / kCheckpointBest).string(), ck);
  try {
    load_model(staged.path(), "", "cpu", ModelUse::read_weights);  // as import_model: an error now, not at the first translation
  } catch (const InputError& e) {
    throw InputError(staged.as_out(e.what()));
  }
  r.replaced = staged.commit();
  r.to = (fs::path(out) / kCheckpointBest).string();
  return r;
}

}  // namespace yoke
