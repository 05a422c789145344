#include "store/model_store.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "align/pair_data.h"
#include "embed/initial_values.h"
#include "model/fp32_kernel.h"
#include "model/int8_kernel.h"
#include "model/int8_linear.h"
#include "store/checkpoint.h"
#include "store/int8_model.h"
#include "store/model_export.h"
#include "store/model_files.h"
#include "text/data_meta.h"
#include "text/vocab_files.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {

static std::shared_ptr<const SharedPrivateLayout> load_pair_layout(const Config& cfg, const std::string& vocab_dir) {
  if (vocab_dir.empty()) throw InputError("tie = shared-private needs the vocabularies: set data = DIR");
  const PairingInput words = vocabulary_words(vocab_dir);
  auto layout = std::make_shared<SharedPrivateLayout>();
  layout->src_vocab = int64_t(words.src_words.size());
  layout->tgt_vocab = int64_t(words.tgt_words.size());
  layout->dim = cfg.d_model;
  layout->lambda = {cfg.lambda_lm, cfg.lambda_wf, cfg.lambda_ur};
  for (const auto& p : read_pairs(cfg.pairs, words)) layout->pairs[int(p.category)].emplace_back(p.src_id, p.tgt_id);
  return layout;
}

Config checkpoint_config(const nlohmann::json& meta, const std::string& path) {
  if (!meta.contains("config") || !meta.at("config").is_object())
    throw input_error(path, 0, "corrupt checkpoint header: it holds no model config");
  try {
    Config c = Config::from_json(meta.at("config"));
    c.validate();
    return c;
  } catch (const std::exception& e) {  // a bad value (InputError) or a value of the wrong JSON type
    throw input_error(path, 0, std::string("the model config in its header is invalid: ") + e.what());
  }
}

void fill_vocab_sizes(Config& cfg) {
  if (cfg.data.empty()) return;
  const auto meta = DataMeta::read(cfg.data);
  cfg.src_vocab_size = meta.src_vocab_size;
  cfg.tgt_vocab_size = meta.tgt_vocab_size;
  cfg.joint_vocab = meta.joint;
}

std::shared_ptr<Transformer> build_model(const Config& cfg, const std::string& vocab_dir) {
  auto spec = EmbeddingSpec::from_config(cfg);
  if (spec.tie == Tie::shared_private) spec.shared_private = load_pair_layout(cfg, vocab_dir);
  return std::make_shared<Transformer>(ModelSpec::from_config(cfg), spec);
}

std::shared_ptr<Transformer> build_unset_model(const Config& cfg, const std::string& vocab_dir) {
  const SkipInitialValues unset;
  return build_model(cfg, vocab_dir);
}

std::optional<std::string> find_checkpoint(const std::string& dir) {
  for (const char* f : {kCheckpointBest, kCheckpointLast, kExportedWeights})
    if (fs::exists(fs::path(dir) / f)) return (fs::path(dir) / f).string();
  return std::nullopt;
}

std::string pick_checkpoint(const std::string& dir, const std::string& name) {
  if (!fs::is_directory(dir)) throw input_error(dir, 0, "model directory not found");
  if (!name.empty()) {
    const std::string p = fs::exists(name) ? name : (fs::path(dir) / name).string();
    if (!fs::exists(p)) throw input_error(p, 0, "checkpoint not found");
    return p;
  }
  if (auto found = find_checkpoint(dir)) return *found;
  throw input_error(dir, 0, "no checkpoint_best.ykp, checkpoint_last.ykp or " + std::string(kExportedWeights) +
                                " here: has `yoke train` run with save_dir = " + dir + "?");
}

static bool is_safetensors(const std::string& path) { return fs::path(path).extension() == ".safetensors"; }

Checkpoint read_model_file(const std::string& path) {
  if (is_safetensors(path)) return read_exported_model(path);
  return load_checkpoint(path, [](const std::string& name) { return !is_optimizer_tensor(name); });
}

nlohmann::json read_model_meta(const std::string& path) {
  return is_safetensors(path) ? read_exported_model(path).meta : read_checkpoint_header(path).meta;
}

static std::string vocab_path(const std::string& dir, const char* side) {
  const auto joint = fs::path(dir) / "spm.model";
  if (fs::exists(joint)) return joint.string();
  const auto own = fs::path(dir) / (std::string("spm.") + side + ".model");
  if (fs::exists(own)) return own.string();
  throw input_error(dir, 0, std::string("no SentencePiece model (spm.model or spm.") + side + ".model)");
}
std::vector<std::string> copy_model_files(const std::string& from, const std::string& to) {
  std::vector<std::string> copied;
  std::vector<const char*> files(kVocabularyFiles.begin(), kVocabularyFiles.end());
  files.push_back(kPairsFile);
  for (const char* f : files) {
    const auto src = fs::path(from) / f;
    if (!fs::exists(src)) continue;
    std::error_code ec;  // a full disk or a read-only folder: said as such, not as an internal error
    fs::copy_file(src, fs::path(to) / f, fs::copy_options::overwrite_existing, ec);
    if (ec) throw RunError("cannot copy " + src.string() + " to " + (fs::path(to) / f).string() + ": " + ec.message());
    copied.push_back(f);
  }
  return copied;
}

std::string source_vocab_path(const std::string& dir) { return vocab_path(dir, "src"); }
std::string target_vocab_path(const std::string& dir) { return vocab_path(dir, "tgt"); }

namespace {

// The config comes from the file (a checkpoint's header, an export's metadata) and the model is
// built from it before its weights are copied in: a 0.5 MB file that says d_model 8192 or a
// million layers took gigabytes first. So the sizes that memory grows with are checked against
// the tensors the file holds, before anything is built: the width and positions (the position
// table), the layers of each stack (the layer prefixes), the feed-forward size (its first layer).
void check_config_fits_tensors(const Config& c, const std::map<std::string, at::Tensor>& w, const std::string& path) {
  const auto differ = [&](const std::string& key, int64_t config, const std::string& tensor, int64_t file) {
    throw input_error(path, 0, "its config says " + key + " = " + std::to_string(config) + " but tensor '" + tensor +
                                   "' gives " + std::to_string(file) + ": the config does not describe these weights");
  };
  if (const auto it = w.find("positions"); it != w.end() && it->second.dim() == 2) {
    if (it->second.size(1) != c.d_model) differ("d_model", c.d_model, "positions", it->second.size(1));
    if (it->second.size(0) != c.max_positions) differ("max_positions", c.max_positions, "positions", it->second.size(0));
  }
  for (const auto& [stack, layers] : {std::pair<std::string, int64_t>{"encoder", c.task == Task::lm ? 0 : c.encoder_layers},
                                      std::pair<std::string, int64_t>{"decoder", c.decoder_layers}}) {
    int64_t stored = 0;  // one past the highest layer index among the tensor names
    for (const auto& [name, t] : w) {
      if (name.rfind(stack, 0) != 0) continue;
      const auto dot = name.find('.');
      const std::string index = name.substr(stack.size(), dot == std::string::npos ? std::string::npos : dot - stack.size());
      if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos || index.size() > 9) continue;
      stored = std::max(stored, int64_t(std::stoll(index)) + 1);
    }
    const int64_t expected = c.cross_layer ? std::min<int64_t>(layers, 1) : layers;  // cross_layer stores layer 0 once
    if (stored != expected)
      throw input_error(path, 0, "its config says " + stack + "_layers = " + std::to_string(layers) +
                                     (c.cross_layer ? " (cross_layer: one stored)" : "") + " but the file holds " +
                                     std::to_string(stored) + " " + stack + " layer" + (stored == 1 ? "" : "s") +
                                     ": the config does not describe these weights");
    if (const auto f = w.find(stack + "0.ffn.w1"); f != w.end() && f->second.dim() == 2 && f->second.size(0) != c.ffn_dim)
      differ("ffn_dim", c.ffn_dim, stack + "0.ffn.w1", f->second.size(0));
  }
}

}  // namespace

LoadedModel load_model(const std::string& dir, const std::string& checkpoint_name, const std::string& device,
                       ModelUse use) {
  LoadedModel m;
  m.checkpoint = pick_checkpoint(dir, checkpoint_name);
  auto ckpt = read_model_file(m.checkpoint);
  m.config = checkpoint_config(ckpt.meta, m.checkpoint);
  // Checkpoints from before the record have none; they load as they always did.
  if (ckpt.meta.contains("vocab") && ckpt.meta.at("vocab").is_object())
    if (const auto d = vocab_difference(ckpt.meta.at("vocab"), vocab_checksums(dir)))
      throw input_error((fs::path(dir) / d->file).string(), 0,
                        "is not the vocabulary recorded in " + m.checkpoint + " (" + d->detail +
                            "): the model directory's vocabulary was replaced after training; put back the file "
                            "the model was trained with");
  m.tgt_vocab = Vocab::load(target_vocab_path(dir));
  m.src_vocab = m.config.task == Task::lm ? m.tgt_vocab : Vocab::load(source_vocab_path(dir));
  // Checked before the model is built with the config's vocabulary sizes. Whatever the checksums
  // say (a file without the record has none), a vocabulary of another size than the model's rows
  // gives garbage (smaller) or indices past the matrix (larger).
  const auto check_size = [&](const Vocab& v, int64_t rows, const std::string& path, const char* key) {
    if (v.size() != rows)
      throw input_error(path, 0, "has " + std::to_string(v.size()) + " pieces, the model in " + m.checkpoint + " " +
                                     std::to_string(rows) + " rows (" + key + "): not the vocabulary it was trained with");
  };
  check_size(m.tgt_vocab, m.config.tgt_vocab_size, target_vocab_path(dir), "tgt_vocab_size");
  if (m.config.task != Task::lm) check_size(m.src_vocab, m.config.src_vocab_size, source_vocab_path(dir), "src_vocab_size");
  // Training copies the pair file into the model directory: the model needs nothing else.
  if (m.config.tie == Tie::shared_private) m.config.pairs = (fs::path(dir) / kPairsFile).string();
  const bool int8 = m.int8 = is_int8_checkpoint(ckpt);
  Int8Weights int8_weights;
  if (int8) int8_weights = take_int8_weights(ckpt, m.checkpoint);
  const auto weights = model_weights(ckpt);
  check_config_fits_tensors(m.config, weights, m.checkpoint);
  m.model = build_unset_model(m.config, dir);  // every parameter and buffer is copied from the file next
  load_module_state(*m.model, weights, m.checkpoint);
  const auto where = compat::device_from_name(device);
  if (where.is_cuda()) compat::allow_tf32();
  m.model->to(where);
  m.model->eval();
  // An int8 model decodes with the int8 kernel measured fastest on this CPU (model/int8_kernel.h);
  // where that is fp32, and on a GPU, it runs its fp32 layers on the dequantized weights loaded
  // above, which give the same numbers up to the activations' rounding.
  if (use == ModelUse::read_weights || where.is_cuda()) return m;
  if (int8 && int8_available()) {
    std::vector<const Int8Weight*> matrices;
    for (const auto& [name, w] : int8_weights) matrices.push_back(&w);
    if (choose_int8_kernel(matrices) != Int8Kernel::fp32) m.model->use_int8(int8_weights);
  } else if (!int8 && fp32_kernel_available(Fp32Kernel::onednn)) {
    // An fp32 model likewise multiplies with the fp32 product measured faster here
    // (model/fp32_kernel.h): oneDNN with its weights packed once, or at::linear.
    if (choose_fp32_kernel(m.model->decoding_matrices()) == Fp32Kernel::onednn) m.model->use_packed_fp32();
  }
  return m;
}

LoadedModel load_model_for(Task task, const std::string& dir, const std::string& checkpoint_name,
                           const std::string& device) {
  LoadedModel m = load_model(dir, checkpoint_name, device);
  if (m.config.task != task)
    throw input_error(dir, 0, std::string("is a ") + (m.config.task == Task::lm ? "language" : "translation") +
                                  " model (task = " + name_of(m.config.task) + "); this command needs task = " +
                                  name_of(task));
  return m;
}

}  // namespace yoke
