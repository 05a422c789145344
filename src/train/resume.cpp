#include "train/resume.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "config/config_diff.h"
#include "model/transformer.h"
#include "store/checkpoint.h"
#include "store/int8_model.h"
#include "store/model_files.h"
#include "store/model_store.h"
#include "text/vocab_files.h"
#include "train/flat_adam.h"
#include "util/atomic_file.h"
#include "util/checksum.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {

void check_resume(const Config& cfg, const nlohmann::json& data_vocab, const nlohmann::json& train_checksums,
                  std::ostream& log) {
  const fs::path dir(cfg.save_dir), path = dir / kCheckpointLast;
  if (!fs::exists(path)) return;
  const std::string ckpt = path.string();
  const CheckpointHeader header = read_checkpoint_header(ckpt);
  const auto has = [&](const std::string& name) {
    return std::find(header.tensors.begin(), header.tensors.end(), name) != header.tensors.end();
  };
  if (!header.meta.contains("state") || !has("optimizer.exp_avg") || !has("optimizer.exp_avg_sq"))
    throw input_error(ckpt, 0, "holds weights only (a numbered, averaged or int8 checkpoint?), no trainer state to "
                               "resume from; checkpoint_last.ykp is the name of the file `yoke train` writes: move "
                               "this one away, or train into another save_dir");

  const Config before = checkpoint_config(header.meta, ckpt);
  std::vector<ConfigChange> fixed, allowed;
  for (auto& c : config_changes(before, cfg)) (c.allowed ? allowed : fixed).push_back(c);
  if (!fixed.empty())
    throw input_error(ckpt, 0, "cannot resume: this run's config differs from the checkpoint's in keys that cannot "
                               "change within a run: " + describe_changes(fixed) +
                               "; set them back, or train into another save_dir");
  if (!allowed.empty()) log << "resume: config changed since " << ckpt << ": " << describe_changes(allowed) << std::endl;

  // The data's vocabularies against those the model was trained with: recorded in the checkpoint,
  // or, for a checkpoint from before the record, the copies in save_dir.
  const bool recorded = header.meta.contains("vocab") && header.meta.at("vocab").is_object();
  const nlohmann::json trained_with = recorded ? header.meta.at("vocab") : vocab_checksums(cfg.save_dir);
  if (recorded || !trained_with.empty())
    if (const auto d = vocab_difference(trained_with, data_vocab))
      throw input_error((fs::path(cfg.data) / d->file).string(), 0,
                        "is not the vocabulary the model in " + ckpt + " was trained with, " +
                            (trained_with.contains(d->file) ? (dir / d->file).string() : "the one in " + dir.string()) +
                            " (" + d->detail + "): the data set was prepared again, or is another one. Resume with "
                            "the data the model was trained on, or train into another save_dir");

  // The training corpus itself: an exact resume replays the same batch order over the same
  // pairs, which a data set prepared again (other shards) or a meta.json edited (a shard dropped
  // or listed twice) would silently break. Checkpoints from before the record are not checked.
  if (header.meta.contains("train_data") && header.meta.at("train_data").is_array()) {
    const auto& recorded_files = header.meta.at("train_data");
    const auto describe = [](const nlohmann::json& files) {
      std::string out;
      for (const auto& f : files) out += (out.empty() ? "" : ", ") + f.value("file", std::string("?"));
      return out;
    };
    std::string differs;
    if (recorded_files.size() != train_checksums.size()) {
      differs = "its training files are " + describe(train_checksums) + ", the checkpoint's " + describe(recorded_files);
    } else {
      for (size_t i = 0; i < recorded_files.size() && differs.empty(); ++i) {
        const auto &was = recorded_files[i], &now = train_checksums[i];
        if (was.value("file", "") != now.value("file", ""))
          differs = "training file " + std::to_string(i + 1) + " is " + now.value("file", "") + ", the checkpoint's " +
                    was.value("file", "");
        else if (was.value("bytes", int64_t(-1)) != now.value("bytes", int64_t(-2)) ||
                 was.value("crc32", int64_t(-1)) != now.value("crc32", int64_t(-2)))
          differs = now.value("file", "") + " is not the file the checkpoint was trained on (" +
                    std::to_string(now.value("bytes", int64_t(0))) + " bytes, recorded " +
                    std::to_string(was.value("bytes", int64_t(0))) + "; or its CRC-32 differs)";
      }
    }
    if (!differs.empty())
      throw input_error(cfg.data, 0, "cannot resume " + ckpt + ": " + differs + ". The data set was prepared again or its "
                                     "meta.json edited, and an exact resume needs the data the run started on. Resume "
                                     "with that data, or train on this data into another save_dir (init_from = " +
                                     cfg.save_dir + " starts from this model's weights)");
  }

  if (cfg.tie == Tie::shared_private) {
    const auto copy = dir / kPairsFile;
    if (fs::exists(copy) && fs::exists(cfg.pairs) && !fs::equivalent(cfg.pairs, copy) &&
        file_crc32(cfg.pairs) != file_crc32(copy.string()))
      throw input_error(cfg.pairs, 0, "differs from " + copy.string() + ", the pair file the model in " + ckpt +
                                           " was trained with; resume with that one, or train into another save_dir");
  }
}

namespace {

// The flat Adam moments of a checkpoint that still holds key biases (store/checkpoint.h): the
// buffer follows the model's parameters in order, each kv_bias [2d] where the model has v_bias
// [d], so the key half of each such slice is dropped. Other checkpoints' moments as they are.
at::Tensor without_key_bias_moments(const Checkpoint& c, const Transformer& model, const at::Tensor& flat) {
  if (std::none_of(c.tensors.begin(), c.tensors.end(), [](const auto& t) { return is_legacy_kv_bias(t.first); }))
    return flat;
  const std::string v_bias = ".v_bias";
  std::vector<at::Tensor> parts;
  int64_t at = 0;
  for (const auto& p : model.named_parameters(true)) {
    const auto& name = p.key();
    const int64_t n = p.value().numel();
    const size_t base = name.size() - std::min(name.size(), v_bias.size());
    const bool was_kv = name.compare(base, std::string::npos, v_bias) == 0 &&
                        c.tensors.count(model_tensor_name(name.substr(0, base) + ".kv_bias"));
    if (at + (was_kv ? 2 * n : n) > flat.numel()) return flat;  // does not fit: the caller says so
    parts.push_back(flat.narrow(0, was_kv ? at + n : at, n));
    at += was_kv ? 2 * n : n;
  }
  return at == flat.numel() ? at::cat(parts) : flat;
}

}  // namespace

std::optional<LoopState> resume(const Config& cfg, int world, Transformer& model, FlatAdam& opt, std::ostream& log) {
  const auto path = fs::path(cfg.save_dir) / kCheckpointLast;
  if (!fs::exists(path)) return std::nullopt;
  auto c = load_checkpoint(path.string());
  load_module_state(model, model_weights(c), path.string());
  // check_resume() has seen these names; their shapes and the state's fields are checked here.
  for (auto [name, into] : {std::pair<const char*, at::Tensor*>{"optimizer.exp_avg", &opt.exp_avg()},
                             std::pair<const char*, at::Tensor*>{"optimizer.exp_avg_sq", &opt.exp_avg_sq()}}) {
    const auto it = c.tensors.find(name);
    if (it == c.tensors.end()) throw input_error(path.string(), 0, std::string("lacks its optimizer state (") + name + ")");
    const auto moments = without_key_bias_moments(c, model, it->second);
    if (moments.sizes() != into->sizes())
      throw input_error(path.string(), 0, std::string("its optimizer state (") + name + ") does not fit the model");
    into->copy_(moments);
  }
  LoopState st;
  int64_t before = 0;
  try {
    opt.set_steps(c.meta.at("optimizer_steps"));
    st = LoopState::from_json(c.meta.at("state"));
    before = c.meta.value("batches_per_update", int64_t(0));
  } catch (const nlohmann::json::exception& e) {
    throw input_error(path.string(), 0, std::string("corrupt trainer state: ") + e.what());
  }
  log << "resumed from " << path.string() << " at epoch " << st.epoch << ", update " << st.update << std::endl;
  // Another number of ranks continues the same sequence of batches; only how many of them make
  // one update can change, and that is the user's choice to make knowingly.
  const int64_t now = int64_t(cfg.update_freq) * world;
  if (before > 0 && before != now)
    log << "note: the checkpoint was trained with " << before << " batches per update, this run takes " << now
         << " (update_freq " << cfg.update_freq << " x " << world << " rank" << (world == 1 ? "" : "s")
         << "); for the same updates as before set update_freq = " << before << " / ranks" << std::endl;
  return st;
}

void repair_best(const Config& cfg, const LoopState& st, std::ostream& log) {
  if (st.best_update < 0) return;  // not recorded (an older checkpoint), or no validation yet
  const fs::path dir(cfg.save_dir), best = dir / kCheckpointBest;
  int64_t held = -1;
  std::string damage;
  if (fs::exists(best)) {
    try {
      const auto meta = read_checkpoint_header(best.string()).meta;
      if (meta.contains("state") && meta.at("state").is_object()) held = meta.at("state").value("update", int64_t(-1));
    } catch (const std::exception& e) {  // damaged (InputError), or a state of the wrong JSON type
      damage = e.what();
    }
  }
  if (held == st.best_update) return;
  // The weights of the best update: checkpoint_last's when it is that update (the kill came
  // between the two writes), else its numbered checkpoint while keep_last still keeps it.
  const fs::path last = dir / kCheckpointLast, numbered = dir / numbered_checkpoint_name(st.best_update);
  const fs::path from = st.update == st.best_update ? last : numbered;
  const std::string was = !damage.empty() ? "was unreadable (" + damage + ")"
                          : held < 0      ? "was missing"
                                          : "held update " + std::to_string(held);
  if (!fs::exists(from)) {
    log << "warning: " << best.string() << " " << was << ", but the best validation was at update "
         << st.best_update << ", whose weights are no longer kept; it is replaced at the next better validation"
         << std::endl;
    return;
  }
  copy_file_atomically(from.string(), best.string());
  log << "repaired " << best.string() << ": it " << was << ", but the best validation was at update "
       << st.best_update << "; copied " << from.filename().string() << std::endl;
}

bool saves_numbered_copy(const std::string& reason) { return reason == "valid" || reason == "interval"; }

void repair_numbered(const Config& cfg, const LoopState& st, std::ostream& log) {
  const fs::path dir(cfg.save_dir), last = dir / kCheckpointLast, numbered = dir / numbered_checkpoint_name(st.update);
  if (fs::exists(numbered) || !fs::exists(last)) return;
  // The header first: most resumes (after a signal or at the end) have no copy to repair, and
  // resume() reads the whole file already.
  const std::string reason = read_checkpoint_header(last.string()).meta.value("reason", std::string());
  if (!saves_numbered_copy(reason)) return;
  Checkpoint c = load_checkpoint(last.string());
  c.tensors.erase("optimizer.exp_avg");  // what Trainer::save adds to checkpoint_last beyond the copy
  c.tensors.erase("optimizer.exp_avg_sq");
  save_checkpoint(numbered.string(), c);
  prune_numbered_checkpoints(dir.string(), cfg.keep_last);
  log << "repaired " << numbered.string() << ": it was missing, but checkpoint_last (update " << st.update
      << ", saved at a " << (reason == "valid" ? "validation" : "save interval") << ") holds its weights" << std::endl;
}

nlohmann::json InitSource::to_json() const {
  nlohmann::json j = {{"checkpoint", checkpoint}, {"data", data}};
  j["update"] = update >= 0 ? nlohmann::json(update) : nlohmann::json();
  return j;
}

std::optional<InitSource> check_init_from(const Config& cfg, const nlohmann::json& data_vocab) {
  if (cfg.init_from.empty()) return std::nullopt;
  const fs::path given(cfg.init_from);
  if (!fs::exists(given)) throw input_error(cfg.init_from, 0, "init_from: no such model directory or checkpoint");
  // A directory gives its best checkpoint (else its last); a file is taken as it is.
  const bool is_dir = fs::is_directory(given);
  const fs::path model_dir = is_dir ? given : given.parent_path();
  InitSource src;
  src.checkpoint = is_dir ? pick_checkpoint(given.string(), "") : given.string();
  std::error_code ec;
  if (fs::equivalent(model_dir, cfg.save_dir, ec))
    throw input_error(cfg.init_from, 0, "init_from names this run's own save_dir; a fine-tuned model is written to "
                                        "a save_dir of its own (a run continues itself by resuming, without init_from)");
  const nlohmann::json meta = read_model_meta(src.checkpoint);  // a .ykp, or an exported .safetensors
  if (is_int8_meta(meta))
    throw input_error(src.checkpoint, 0, "init_from: is an int8 model (`yoke quantize`): its weights are rounded to "
                                         "int8 and cannot be trained further; start from the fp32 model it was made from");
  // First the data's vocabularies against those the model was trained with (recorded, or the
  // copies beside an older checkpoint): the same ids must mean the same subwords. Before the
  // config, whose vocabulary sizes would otherwise show a changed vocabulary as changed keys.
  const bool recorded = meta.contains("vocab") && meta.at("vocab").is_object();
  const nlohmann::json trained_with = recorded ? meta.at("vocab") : vocab_checksums(model_dir.string());
  if (const auto d = vocab_difference(trained_with, data_vocab))
    throw input_error((fs::path(cfg.data) / d->file).string(), 0,
                      "is not the vocabulary of the model init_from starts from, " + (model_dir / d->file).string() +
                          " (" + d->detail + "): fine-tuning needs data prepared with the model's vocabulary");
  const Config trained = checkpoint_config(meta, src.checkpoint);
  std::vector<ConfigChange> model_changes;
  for (auto& c : config_changes(trained, cfg))
    if (defines_model(c.key)) model_changes.push_back(c);
  if (!model_changes.empty())
    throw input_error(src.checkpoint, 0, "init_from: this run's config differs from the model's in keys that define "
                                         "the model: " + describe_changes(model_changes) +
                                         "; set them as the model has them (its config.json or `yoke train --help`)");
  if (cfg.tie == Tie::shared_private) {
    const auto copy = model_dir / kPairsFile;
    if (!fs::exists(cfg.pairs) || !fs::exists(copy) || file_crc32(cfg.pairs) != file_crc32(copy.string()))
      throw input_error(cfg.pairs, 0, "differs from " + copy.string() + ", the pair file of the model init_from "
                                      "starts from: its shared-private rows are laid out by those pairs; set pairs = " +
                                      copy.string());
  }
  if (meta.contains("state") && meta.at("state").is_object())
    src.update = meta.at("state").value("update", int64_t(-1));
  src.data = trained.data;
  return src;
}

void load_init_weights(const InitSource& from, Transformer& model, std::ostream& log) {
  const auto c = read_model_file(from.checkpoint);
  load_module_state(model, model_weights(c), from.checkpoint);
  log << "init_from: starting from the weights of " << from.checkpoint;
  if (from.update >= 0) log << " (update " << from.update << (from.data.empty() ? "" : " on " + from.data) << ")";
  log << "; new optimizer state and learning-rate schedule" << std::endl;
}

}  // namespace yoke
