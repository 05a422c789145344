#include "train/trainer.h"

#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <thread>

#include "batch/batch.h"
#include "batch/batching.h"
#include "batch/lm_batch.h"
#include "config/config_diff.h"
#include "train/gradient_sync.h"
#include "train/process_group.h"
#include "eval/bleu.h"
#include "loss/batch_loss.h"
#include "loss/loss.h"
#include "text/binarized.h"
#include "text/corpus.h"
#include "text/vocab_files.h"
#include "store/checkpoint.h"
#include "train/flat_adam.h"
#include "store/model_store.h"
#include "util/atomic_file.h"
#include "util/checksum.h"
#include "util/dir_lock.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/progress.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

std::atomic<int> g_signals{0};
std::atomic<int> g_first_signal{0};

void on_signal(int sig) {
  if (g_signals.fetch_add(1) >= 1) _exit(128 + sig);  // second Ctrl-C: leave now
  g_first_signal = sig;
}

// Where the loop is: enough to continue exactly (batches are a function of seed and epoch,
// dropout of seed and update).
struct LoopState {
  int epoch = 1;
  size_t batch_in_epoch = 0;  // batches of this epoch already consumed
  int64_t update = 0;
  double best = NAN;
  int64_t best_update = -1;  // the update whose weights checkpoint_best must hold; -1 = not recorded
  int bad_validations = 0;
  double elapsed_s = 0;
  double valid_s = 0;  // of elapsed_s, spent validating (not training)
  int64_t tokens = 0;
  nlohmann::json to_json() const {
    return {{"epoch", epoch}, {"batch_in_epoch", batch_in_epoch}, {"update", update},
            {"best", std::isnan(best) ? nlohmann::json() : nlohmann::json(best)}, {"best_update", best_update},
            {"bad_validations", bad_validations}, {"elapsed_s", elapsed_s}, {"valid_s", valid_s}, {"tokens", tokens}};
  }
  static LoopState from_json(const nlohmann::json& j) {
    LoopState s;
    s.epoch = j.at("epoch");
    s.batch_in_epoch = j.at("batch_in_epoch");
    s.update = j.at("update");
    s.best = j.at("best").is_null() ? NAN : j.at("best").get<double>();
    s.best_update = j.value("best_update", int64_t(-1));  // absent before it was recorded
    s.bad_validations = j.at("bad_validations");
    s.elapsed_s = j.at("elapsed_s");
    s.valid_s = j.value("valid_s", 0.0);
    s.tokens = j.at("tokens");
    return s;
  }
};

class MetricsLog {
 public:
  // Keeps the records of updates up to `resumed_update` (a resumed run replays the updates after
  // its checkpoint, and their records would come twice); -1 starts an empty log.
  MetricsLog(const std::string& path, int64_t resumed_update) : path_(path) {
    std::string kept;
    if (resumed_update >= 0)
      for (const auto& j : read_json_lines(path)) {
        if (j.contains("update") && j.at("update").is_number() && j.at("update").get<int64_t>() > resumed_update) continue;
        kept += j.dump() + '\n';  // as write() wrote it
      }
    write_file_atomically(path, kept);
    out_.open(path, std::ios::app);
    if (!out_) throw input_error(path, 0, "cannot open metrics file for appending");
  }
  void write(nlohmann::json j) {
    j["time"] = double(std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count()) / 1000.0;
    out_ << j.dump() << '\n';
    out_.flush();
    if (!out_) throw input_error(path_, 0, std::string("cannot write: ") + std::strerror(errno));
  }

 private:
  std::string path_;
  std::ofstream out_;
};

struct ValidResult {
  double loss = 0, nll = 0, bleu = NAN;
};

class Trainer {
 public:
  // group: the other ranks of a distributed run, or null for one process. Only rank 0 (the
  // writer) logs, records metrics and writes checkpoints; `log` is a null stream elsewhere.
  Trainer(Config cfg, std::ostream& log, ValidationDecoder decode, std::unique_ptr<ProcessGroup> group,
          const DistributedEnv& env)
      : cfg_(std::move(cfg)), log_(log), decode_(std::move(decode)), group_(std::move(group)), env_(env) {}
  TrainResult run();

 private:
  void load_data();
  bool lm() const { return cfg_.task == Task::lm; }
  bool blocks() const { return lm() && cfg_.lm_block > 0; }
  // A batch on the training device; the real target positions are found on the host, so the
  // step never waits on the GPU to count them.
  Batch batch(const TokenizedCorpus& c, const std::vector<uint32_t>& idx) const {
    return batch_to_device(lm() ? make_lm_batch(c, idx, blocks()) : make_batch(c, idx), device_);
  }
  // Lengths as the batcher counts them: a language model has no source.
  std::vector<uint32_t> src_lengths(const TokenizedCorpus& c) const {
    return lm() ? std::vector<uint32_t>(c.size(), 0) : source_lengths(c);
  }
  std::vector<uint32_t> tgt_lengths(const TokenizedCorpus& c) const {
    return lm() ? lm_lengths(c, blocks()) : target_lengths(c);
  }
  bool writer() const { return !group_ || group_->rank() == 0; }
  int rank() const { return group_ ? group_->rank() : 0; }
  int world() const { return group_ ? group_->size() : 1; }
  void record(const nlohmann::json& j) {
    if (metrics_) metrics_->write(j);
  }
  // Sums a small tensor of counts over the ranks (nothing to do in one process).
  void sum_over_ranks(at::Tensor& t) {
    if (group_) group_->allreduce_sum(t);
  }
  void save(const std::string& reason);
  // Before anything is written: a checkpoint_last that cannot be resumed with this run's config,
  // data or pair file is an InputError; keys that may change and did are logged.
  void check_resume();
  bool resume();
  // checkpoint_best must hold the update the trainer state records as best: a kill between
  // writing checkpoint_last and copying it to checkpoint_best leaves the older one behind.
  void repair_best();
  // Rank 0's weights, optimizer state and loop state reach every rank (another machine need not
  // see rank 0's files). Returns whether rank 0 resumed.
  bool share_start(bool resumed);
  LossSums forward(const Batch& b);
  ValidResult validate();
  bool after_validation(const ValidResult& v);  // true = stop early
  std::vector<std::vector<uint32_t>> epoch_batches(int epoch) const;

  Config cfg_;
  std::ostream& log_;
  ValidationDecoder decode_;
  at::Device device_{at::kCPU};
  std::shared_ptr<Transformer> model_;
  std::unique_ptr<FlatAdam> opt_;
  TokenizedCorpus train_, valid_;
  std::vector<uint32_t> train_src_lens_, train_tgt_lens_;
  std::vector<std::string> valid_refs_;
  Vocab tgt_vocab_;
  nlohmann::json vocab_checksums_;  // of the data's vocabularies, recorded in every checkpoint
  LoopState st_;
  std::unique_ptr<MetricsLog> metrics_;  // rank 0 only
  std::unique_ptr<ProcessGroup> group_;
  DistributedEnv env_;
  std::unique_ptr<GradientSync> sync_;
};

std::vector<std::vector<uint32_t>> Trainer::epoch_batches(int epoch) const {
  return make_token_batches(train_src_lens_, train_tgt_lens_, size_t(cfg_.max_tokens), true,
                            uint64_t(cfg_.seed) * 1000003ull + uint64_t(epoch));
}

void Trainer::load_data() {
  const fs::path dir(cfg_.data);
  train_ = load_binarized((dir / "train.bin").string());
  valid_ = load_binarized((dir / "valid.bin").string());
  if (train_.size() == 0) throw input_error((dir / "train.bin").string(), 0, "no training pairs");
  check_token_ids(train_, cfg_.src_vocab_size, cfg_.tgt_vocab_size, (dir / "train.bin").string());
  check_token_ids(valid_, cfg_.src_vocab_size, cfg_.tgt_vocab_size, (dir / "valid.bin").string());
  if (!lm() && train_.src_tokens.empty())
    throw input_error((dir / "train.bin").string(), 0,
                      "has no source side: it was prepared for a language model (yoke prepare --lm); set task = lm");
  if (blocks()) {
    train_ = stream_blocks(train_, cfg_.lm_block);
    valid_ = stream_blocks(valid_, cfg_.lm_block);
  }
  train_src_lens_ = src_lengths(train_);
  train_tgt_lens_ = tgt_lengths(train_);
  // A sequence longer than the position table would stop training mid-run: refuse it now.
  for (const auto& [file, lists] :
       {std::pair<std::string, std::vector<std::vector<uint32_t>>>{"train.bin", {train_src_lens_, train_tgt_lens_}},
        {"valid.bin", {src_lengths(valid_), tgt_lengths(valid_)}}})
    for (const auto& lengths : lists)
      for (size_t i = 0; i < lengths.size(); ++i)
        if (int64_t(lengths[i]) > cfg_.max_positions)
          throw input_error((dir / file).string(), 0,
                            "sequence " + std::to_string(i + 1) + " has " + std::to_string(lengths[i]) +
                                " positions with its end marker, more than max_positions = " +
                                std::to_string(cfg_.max_positions) + ": raise max_positions, or prepare with --max-len " +
                                std::to_string(cfg_.max_positions - 1));
  if (!lm() && fs::exists(dir / "valid.tgt.txt")) valid_refs_ = read_lines((dir / "valid.tgt.txt").string());
  tgt_vocab_ = Vocab::load(target_vocab_path(cfg_.data));
  // The model directory carries its vocabularies, so `yoke translate --model DIR` needs nothing else.
  // check_resume() has made sure they are the ones a resumed model was trained with; those of
  // the other layout (joint or separate) go, so that no stale file is picked up instead.
  if (!writer()) return;
  fs::create_directories(cfg_.save_dir);
  for (const char* f : {"spm.model", "spm.vocab", "spm.src.model", "spm.src.vocab", "spm.tgt.model", "spm.tgt.vocab"}) {
    const auto to = fs::path(cfg_.save_dir) / f;
    if (fs::exists(dir / f)) copy_file_atomically((dir / f).string(), to.string());
    else if (fs::exists(to)) fs::remove(to);
  }
}

LossSums Trainer::forward(const Batch& b) {
  compat::Autocast autocast(device_, cfg_.amp);  // backward runs outside it, as autocast wants
  return batch_loss(*model_, b, cfg_.label_smoothing);
}

ValidResult Trainer::validate() {
  const auto t0 = std::chrono::steady_clock::now();
  at::NoGradGuard no_grad;
  model_->eval();
  ValidResult r;
  // Each rank takes every world()-th batch and sentence; sums of the loss and of BLEU's
  // statistics over the ranks are the sums over the whole set.
  at::Tensor sums = at::zeros({3}, at::kDouble);  // loss, nll, tokens
  const auto valid_batches = make_token_batches(src_lengths(valid_), tgt_lengths(valid_), size_t(cfg_.max_tokens), false, 0);
  for (size_t i = size_t(rank()); i < valid_batches.size(); i += size_t(world())) {
    auto out = forward(batch(valid_, valid_batches[i]));
    sums[0] += out.loss.item<double>();
    sums[1] += out.nll.item<double>();
    sums[2] += double(out.tokens);
  }
  sum_over_ranks(sums);
  const double tokens = std::max(1.0, sums[2].item<double>());
  r.loss = sums[0].item<double>() / tokens / std::log(2.0);
  r.nll = sums[1].item<double>() / tokens / std::log(2.0);
  if (cfg_.valid_bleu && decode_ && !valid_refs_.empty()) {
    size_t n = valid_.size();
    if (cfg_.valid_bleu_sentences > 0) n = std::min(n, size_t(cfg_.valid_bleu_sentences));
    std::vector<size_t> mine;
    for (size_t i = size_t(rank()); i < n; i += size_t(world())) mine.push_back(i);
    std::vector<std::vector<int>> sources(mine.size());
    for (size_t k = 0; k < mine.size(); ++k) sources[k].assign(valid_.src(mine[k]), valid_.src(mine[k]) + valid_.src_len(mine[k]));
    auto hyps_ids = decode_(*model_, sources, cfg_.max_len_a, cfg_.max_len_b);
    BleuStats stats;
    for (size_t k = 0; k < mine.size(); ++k)
      stats += bleu_sentence_stats(tgt_vocab_.decode(hyps_ids[k]), valid_refs_[mine[k]], false);
    at::Tensor counts = at::zeros({10}, at::kLong);
    for (int j = 0; j < 4; ++j) counts[j] = stats.matches[size_t(j)], counts[4 + j] = stats.totals[size_t(j)];
    counts[8] = stats.sys_len;
    counts[9] = stats.ref_len;
    sum_over_ranks(counts);
    for (int j = 0; j < 4; ++j)
      stats.matches[size_t(j)] = counts[j].item<int64_t>(), stats.totals[size_t(j)] = counts[4 + j].item<int64_t>();
    stats.sys_len = counts[8].item<int64_t>();
    stats.ref_len = counts[9].item<int64_t>();
    r.bleu = bleu_from_stats(stats).score;
  }
  model_->train();
  st_.valid_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

bool Trainer::after_validation(const ValidResult& v) {
  const bool use_bleu = cfg_.early_stop_metric == EarlyStopMetric::bleu && !std::isnan(v.bleu);
  const double metric = use_bleu ? v.bleu : v.loss;
  const bool better = std::isnan(st_.best) || (use_bleu ? metric > st_.best : metric < st_.best);
  if (better) { st_.best = metric; st_.best_update = st_.update; st_.bad_validations = 0; } else { ++st_.bad_validations; }
  char line[200];
  // loss and nll are in bits per token (fairseq's convention), so ppl = 2^nll; BLEU only where computed.
  char bleu[32] = "";
  if (!std::isnan(v.bleu)) std::snprintf(bleu, sizeof bleu, " | bleu %.2f", v.bleu);
  std::snprintf(line, sizeof line, "valid | epoch %d | update %lld | loss %.3f | nll %.3f | ppl %.2f%s%s", st_.epoch,
                (long long)st_.update, v.loss, v.nll, std::pow(2.0, v.nll), bleu, better ? " | best" : "");
  log_ << line << std::endl;
  record({{"type", "valid"}, {"epoch", st_.epoch}, {"update", st_.update}, {"loss", v.loss}, {"nll", v.nll},
                   {"ppl", std::pow(2.0, v.nll)}, {"bleu", std::isnan(v.bleu) ? nlohmann::json() : nlohmann::json(v.bleu)},
                   {"best", better}});
  save("valid");
  if (better && writer())
    copy_file_atomically((fs::path(cfg_.save_dir) / "checkpoint_last.ykp").string(),
                         (fs::path(cfg_.save_dir) / "checkpoint_best.ykp").string());
  return cfg_.patience > 0 && st_.bad_validations >= cfg_.patience;
}

void Trainer::save(const std::string& reason) {
  if (!writer()) return;
  Checkpoint c;
  // The world size is a note, not a dependency: any number of ranks resumes the checkpoint.
  c.meta = {{"config", cfg_.to_json()}, {"state", st_.to_json()}, {"optimizer_steps", opt_->steps()},
            {"reason", reason}, {"format", 1}, {"world_size", world()},
            {"batches_per_update", int64_t(cfg_.update_freq) * world()}, {"vocab", vocab_checksums_}};
  put_model_weights(c, module_state(*model_));
  const fs::path dir(cfg_.save_dir);
  // Numbered checkpoints hold weights only: they exist for averaging and evaluation.
  if (reason == "valid" || reason == "interval") {
    save_checkpoint((dir / numbered_checkpoint_name(st_.update)).string(), c);
    const auto numbered = numbered_checkpoints(dir.string());
    for (size_t i = 0; i + size_t(std::max(1, cfg_.keep_last)) < numbered.size(); ++i) fs::remove(numbered[i].second);
  }
  c.tensors["optimizer.exp_avg"] = opt_->exp_avg();
  c.tensors["optimizer.exp_avg_sq"] = opt_->exp_avg_sq();
  save_checkpoint((dir / "checkpoint_last.ykp").string(), c);
}

void Trainer::check_resume() {
  const fs::path dir(cfg_.save_dir), path = dir / "checkpoint_last.ykp";
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
  for (auto& c : config_changes(before, cfg_)) (c.allowed ? allowed : fixed).push_back(c);
  if (!fixed.empty())
    throw input_error(ckpt, 0, "cannot resume: this run's config differs from the checkpoint's in keys that cannot "
                               "change within a run: " + describe_changes(fixed) +
                               "; set them back, or train into another save_dir");
  if (!allowed.empty()) log_ << "resume: config changed since " << ckpt << ": " << describe_changes(allowed) << std::endl;

  // The data's vocabularies against those the model was trained with: recorded in the checkpoint,
  // or, for a checkpoint from before the record, the copies in save_dir.
  const bool recorded = header.meta.contains("vocab") && header.meta.at("vocab").is_object();
  const nlohmann::json trained_with = recorded ? header.meta.at("vocab") : vocab_checksums(cfg_.save_dir);
  if (recorded || !trained_with.empty())
    if (const auto d = vocab_difference(trained_with, vocab_checksums_))
      throw input_error((fs::path(cfg_.data) / d->file).string(), 0,
                        "is not the vocabulary the model in " + ckpt + " was trained with, " +
                            (trained_with.contains(d->file) ? (dir / d->file).string() : "the one in " + dir.string()) +
                            " (" + d->detail + "): the data set was prepared again, or is another one. Resume with "
                            "the data the model was trained on, or train into another save_dir");

  if (cfg_.tie == Tie::shared_private) {
    const auto copy = dir / "pairs.tsv";
    if (fs::exists(copy) && fs::exists(cfg_.pairs) && !fs::equivalent(cfg_.pairs, copy) &&
        file_crc32(cfg_.pairs) != file_crc32(copy.string()))
      throw input_error(cfg_.pairs, 0, "differs from " + copy.string() + ", the pair file the model in " + ckpt +
                                           " was trained with; resume with that one, or train into another save_dir");
  }
}

bool Trainer::resume() {
  const auto path = fs::path(cfg_.save_dir) / "checkpoint_last.ykp";
  if (!fs::exists(path)) return false;
  auto c = load_checkpoint(path.string());
  load_module_state(*model_, model_weights(c), path.string());
  // check_resume() has seen these names; their shapes and the state's fields are checked here.
  for (const char* name : {"optimizer.exp_avg", "optimizer.exp_avg_sq"}) {
    const auto it = c.tensors.find(name);
    if (it == c.tensors.end() || it->second.sizes() != opt_->exp_avg().sizes())
      throw input_error(path.string(), 0, std::string("its optimizer state (") + name + ") does not fit the model");
  }
  opt_->exp_avg().copy_(c.tensors.at("optimizer.exp_avg"));
  opt_->exp_avg_sq().copy_(c.tensors.at("optimizer.exp_avg_sq"));
  int64_t before = 0;
  try {
    opt_->set_steps(c.meta.at("optimizer_steps"));
    st_ = LoopState::from_json(c.meta.at("state"));
    before = c.meta.value("batches_per_update", int64_t(0));
  } catch (const nlohmann::json::exception& e) {
    throw input_error(path.string(), 0, std::string("corrupt trainer state: ") + e.what());
  }
  log_ << "resumed from " << path.string() << " at epoch " << st_.epoch << ", update " << st_.update << std::endl;
  // Another number of ranks continues the same sequence of batches; only how many of them make
  // one update can change, and that is the user's choice to make knowingly.
  const int64_t now = int64_t(cfg_.update_freq) * world();
  if (before > 0 && before != now)
    log_ << "note: the checkpoint was trained with " << before << " batches per update, this run takes " << now
         << " (update_freq " << cfg_.update_freq << " x " << world() << " rank" << (world() == 1 ? "" : "s")
         << "); for the same updates as before set update_freq = " << before << " / ranks" << std::endl;
  return true;
}

void Trainer::repair_best() {
  if (st_.best_update < 0) return;  // not recorded (an older checkpoint), or no validation yet
  const fs::path dir(cfg_.save_dir), best = dir / "checkpoint_best.ykp";
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
  if (held == st_.best_update) return;
  // The weights of the best update: checkpoint_last's when it is that update (the kill came
  // between the two writes), else its numbered checkpoint while keep_last still keeps it.
  const fs::path last = dir / "checkpoint_last.ykp", numbered = dir / numbered_checkpoint_name(st_.best_update);
  const fs::path from = st_.update == st_.best_update ? last : numbered;
  const std::string was = !damage.empty() ? "was unreadable (" + damage + ")"
                          : held < 0      ? "was missing"
                                          : "held update " + std::to_string(held);
  if (!fs::exists(from)) {
    log_ << "warning: " << best.string() << " " << was << ", but the best validation was at update "
         << st_.best_update << ", whose weights are no longer kept; it is replaced at the next better validation"
         << std::endl;
    return;
  }
  copy_file_atomically(from.string(), best.string());
  log_ << "repaired " << best.string() << ": it " << was << ", but the best validation was at update "
       << st_.best_update << "; copied " << from.filename().string() << std::endl;
}

bool Trainer::share_start(bool resumed) {
  if (!group_) return resumed;
  at::Tensor flag = at::full({1}, resumed ? 1 : 0, at::kLong);
  group_->broadcast(flag, 0);
  resumed = flag.item<int64_t>() != 0;
  // Every rank initialised the same weights from the same seed; rank 0's are sent anyway, as
  // DDP does, so that no rank can start from anything else.
  at::Tensor params = opt_->params().detach();
  group_->broadcast(params, 0);
  if (!resumed) return false;
  group_->broadcast(opt_->exp_avg(), 0);
  group_->broadcast(opt_->exp_avg_sq(), 0);
  const std::string text = nlohmann::json{{"state", st_.to_json()}, {"steps", opt_->steps()}}.dump();
  at::Tensor length = at::full({1}, int64_t(text.size()), at::kLong);
  group_->broadcast(length, 0);
  at::Tensor bytes = at::zeros({length.item<int64_t>()}, at::kByte);
  if (writer()) std::memcpy(bytes.data_ptr(), text.data(), text.size());
  group_->broadcast(bytes, 0);
  const auto j = nlohmann::json::parse(std::string(static_cast<const char*>(bytes.data_ptr()), size_t(bytes.numel())));
  st_ = LoopState::from_json(j.at("state"));
  opt_->set_steps(j.at("steps"));
  return true;
}

TrainResult Trainer::run() {
  // threads = 0 keeps LibTorch's default, or OMP_NUM_THREADS where set (parallel test runs);
  // workers on one machine share its cores. Debian's 1.13 counts 1 thread on a 2-core machine,
  // leaving the products to OpenBLAS's own pool, which trained faster than threads = 2
  // (docs/performance.md, "Threads in training").
  if (cfg_.threads > 0) {
    at::set_num_threads(cfg_.threads);
  } else if (env_.local_world_size > 1 && !std::getenv("OMP_NUM_THREADS")) {
    at::set_num_threads(std::max(1, int(std::thread::hardware_concurrency()) / env_.local_world_size));
  }
  device_ = compat::device_from_name(name_of(cfg_.device));
  if (device_.is_cuda()) compat::allow_tf32();
  if (writer()) {
    vocab_checksums_ = vocab_checksums(cfg_.data);
    check_resume();
  }
  load_data();
  at::manual_seed(uint64_t(cfg_.seed));
  if (cfg_.tie == Tie::shared_private && writer()) {
    const auto copy = fs::path(cfg_.save_dir) / "pairs.tsv";
    if (!fs::exists(cfg_.pairs)) throw input_error(cfg_.pairs, 0, "pair file not found (make it with `yoke pair`)");
    if (!fs::exists(copy) || !fs::equivalent(cfg_.pairs, copy)) copy_file_atomically(cfg_.pairs, copy.string());
  }
  model_ = build_model(cfg_, cfg_.data);
  model_->to(device_);  // before the flat buffer: it is made where the parameters are
  model_->train();
  model_->embeddings->track_gradient_paths(cfg_.log_grad_paths);
  std::vector<at::Tensor> params;
  for (auto& p : model_->parameters(true)) params.push_back(p);
  AdamOptions ao{cfg_.adam_beta1, cfg_.adam_beta2, cfg_.adam_eps, cfg_.weight_decay};
  opt_ = std::make_unique<FlatAdam>(params, ao);
  if (group_) sync_ = std::make_unique<GradientSync>(*group_, params, opt_->grads(), cfg_.dist_bucket_mb);

  const auto counts = count_embeddings(model_->embeddings->spec());
  const int64_t total = opt_->params().numel();
  char summary[240];
  std::snprintf(summary, sizeof summary, "model: %lld parameters | Emb. %lld | Red. %.1f%% | tie %s | output %s | %zu training %s",
                (long long)total, (long long)counts.emb, 100 * counts.red(), name_of(cfg_.tie), name_of(cfg_.output), train_.size(),
                blocks() ? "blocks" : lm() ? "sentences" : "pairs");
  log_ << summary << std::endl;
  if (device_.is_cuda()) log_ << "device: cuda" << (cfg_.amp ? " (bf16 autocast, fp32 weights, TF32)" : " (fp32, TF32)") << std::endl;
  if (group_)
    log_ << "distributed: " << world() << " ranks (Gloo), " << at::get_num_threads()
         << (at::get_num_threads() == 1 ? " thread" : " threads") << " each, "
         << sync_->buckets() << " gradient bucket" << (sync_->buckets() == 1 ? "" : "s") << ", "
         << cfg_.update_freq * world() << " batches per update" << std::endl;
  const bool resumed = share_start(writer() && resume());
  if (resumed && writer()) repair_best();
  if (writer())
    metrics_ = std::make_unique<MetricsLog>((fs::path(cfg_.save_dir) / "metrics.jsonl").string(),
                                            resumed ? st_.update : -1);
  record({{"type", "start"}, {"params", total}, {"emb", counts.emb}, {"red", counts.red()}, {"resumed", resumed},
          {"update", st_.update}, {"world_size", world()}, {"config", cfg_.to_json()}});

  TrainResult result;
  size_t batches_per_epoch = epoch_batches(st_.epoch).size();
  // An update takes update_freq batches on each rank: with N ranks, the same global batches, in
  // the same order, as one process with update_freq × N takes.
  const size_t per_update = size_t(cfg_.update_freq) * size_t(world());
  double total_updates = cfg_.max_updates > 0 ? cfg_.max_updates
                         : cfg_.max_epochs > 0 ? double(cfg_.max_epochs) * double(batches_per_epoch) / double(per_update)
                                               : 0;
  std::optional<Progress> bar;
  if (writer()) bar.emplace("train", total_updates, "upd", 30.0);
  const double elapsed_before = st_.elapsed_s;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return elapsed_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int64_t tokens_before = st_.tokens;
  // Loss sums stay on the device until a log line needs them: no host sync inside the step.
  at::Tensor loss_acc = at::zeros({}, at::TensorOptions(at::kDouble).device(device_)), nll_acc = at::zeros_like(loss_acc);
  int64_t tok_acc = 0;
  double comm_s = 0, comm_s_total = 0;  // waiting for other ranks, since the last log line / in all
  std::string shown_loss = "-";  // until the first log_interval has a measured loss
  std::string stop;

  // A run resumed after it reached a limit (killed while its caller translated, say) stops at
  // once rather than training one more update.
  auto limit_reached = [&]() -> std::string {
    if (cfg_.max_updates > 0 && st_.update >= cfg_.max_updates) return "max_updates";
    if (cfg_.max_minutes > 0 && st_.elapsed_s >= cfg_.max_minutes * 60) return "max_minutes";
    if (cfg_.patience > 0 && st_.bad_validations >= cfg_.patience) return "early stopping";
    return "";
  };
  stop = limit_reached();
  while (stop.empty()) {
    if (cfg_.max_epochs > 0 && st_.epoch > cfg_.max_epochs) { stop = "max_epochs"; break; }
    const auto batches = epoch_batches(st_.epoch);
    // The next batch is built on another thread while the current one trains (declared after
    // `batches`, so a pending build finishes before they go).
    std::future<Batch> next;
    size_t next_index = batches.size();
    auto take_batch = [&](size_t i) {
      return next.valid() && next_index == i ? next.get() : batch(train_, batches[i]);
    };
    auto prefetch = [&](size_t i) {
      if (i >= batches.size()) return;
      next_index = i;
      next = std::async(std::launch::async, [this, &batches, i] { return batch(train_, batches[i]); });
    };
    while (st_.batch_in_epoch < batches.size() && stop.empty()) {
      // This rank's batches of the update: the j-th of the global batch is the one at
      // batch_in_epoch + j, and rank r takes j = r·update_freq … (r+1)·update_freq − 1.
      const size_t first = st_.batch_in_epoch;
      std::vector<size_t> mine;
      for (int k = 0; k < cfg_.update_freq; ++k)
        if (const size_t i = first + size_t(rank() * cfg_.update_freq + k); i < batches.size()) mine.push_back(i);
      st_.batch_in_epoch = std::min(first + per_update, batches.size());
      opt_->zero_grad();
      int64_t tgt_tokens = 0, tokens = 0;
      for (size_t k = 0; k < mine.size(); ++k) {
        // Dropout noise is a function of (seed, update, place in the global batch): a resumed run
        // draws the same masks, and so does a run on another number of ranks.
        const uint64_t j = uint64_t(rank() * cfg_.update_freq) + k;
        at::manual_seed(uint64_t(cfg_.seed) * 7919ull + uint64_t(st_.update) + 1 + j * 1000003ull);
        auto b = take_batch(mine[k]);
        prefetch(k + 1 < mine.size() ? mine[k + 1] : first + per_update + size_t(rank() * cfg_.update_freq));
        if (sync_ && k + 1 == mine.size()) sync_->arm();  // the last backward: start all-reduces as it goes
        auto out = forward(b);
        out.loss.backward();
        loss_acc += out.loss.detach();
        nll_acc += out.nll.detach();
        tok_acc += out.tokens;
        tgt_tokens += out.tokens;
        tokens += b.src_tokens + b.tgt_tokens;
      }
      if (cfg_.log_grad_paths) {
        const auto gp = model_->embeddings->take_gradient_paths();
        record({{"type", "grad_paths"}, {"update", st_.update + 1}, {"share_output", gp.share_output()},
                {"input_sq", gp.input_sq}, {"output_sq", gp.output_sq},
                {"cosine_ab", std::isnan(gp.cosine_ab) ? nlohmann::json() : nlohmann::json(gp.cosine_ab)}});
      }
      bool stop_asked = stop_requested();
      if (group_) {
        const auto c0 = std::chrono::steady_clock::now();
        sync_->finish();
        // The global batch's token counts, whether any rank was asked to stop, and rank 0's clock,
        // so that every rank takes the same decisions.
        at::Tensor shared = at::zeros({4}, at::kDouble);
        shared[0] = double(tgt_tokens);
        shared[1] = double(tokens);
        shared[2] = stop_asked ? 1.0 : 0.0;
        shared[3] = writer() ? elapsed() : 0.0;
        group_->allreduce_sum(shared);
        tgt_tokens = int64_t(shared[0].item<double>());
        tokens = int64_t(shared[1].item<double>());
        stop_asked = shared[2].item<double>() > 0;
        st_.elapsed_s = shared[3].item<double>();
        comm_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
      }
      st_.tokens += tokens;
      opt_->scale_grad(1.0 / double(std::max<int64_t>(1, tgt_tokens)));  // per-token gradient
      const at::Tensor gnorm = opt_->clip_grad_norm(cfg_.clip_norm);
      const double lr = inverse_sqrt_lr(cfg_.lr, cfg_.warmup, st_.update + 1);
      opt_->step(lr);
      ++st_.update;
      if (!group_) st_.elapsed_s = elapsed();
      const double rate = double(st_.tokens - tokens_before) / std::max(1e-9, st_.elapsed_s - elapsed_before);
      if (st_.update % std::max(1, cfg_.log_interval) == 0) {
        at::Tensor sums = at::stack({loss_acc.cpu(), nll_acc.cpu(), at::scalar_tensor(double(tok_acc), at::kDouble)});
        sum_over_ranks(sums);
        const double n = std::max(1.0, sums[2].item<double>());
        const double l = sums[0].item<double>() / n / std::log(2.0);
        const double nl = sums[1].item<double>() / n / std::log(2.0);
        nlohmann::json line = {{"type", "train"}, {"epoch", st_.epoch}, {"update", st_.update}, {"loss", l}, {"nll", nl},
                               {"ppl", std::pow(2.0, nl)}, {"lr", lr}, {"gnorm", gnorm.item<double>()},
                               {"tokens_per_s", rate}, {"elapsed_s", st_.elapsed_s}};
        if (group_) line["comm_wait_s"] = comm_s;
        record(line);
        comm_s_total += comm_s;
        comm_s = 0;
        loss_acc.zero_();
        nll_acc.zero_();
        tok_acc = 0;
        char loss_text[32];
        std::snprintf(loss_text, sizeof loss_text, "%.3f", l);
        shown_loss = loss_text;
      }
      if (bar) {
        char extra[160];
        std::snprintf(extra, sizeof extra, "epoch %d | loss %s | %.0f tok/s | lr %.2e%s", st_.epoch,
                      shown_loss.c_str(), rate, lr,
                      cfg_.max_minutes > 0 ? (" | " + format_duration(cfg_.max_minutes * 60 - st_.elapsed_s) + " left").c_str() : "");
        bar->update(double(st_.update), extra);
      }

      const bool at_limit = (cfg_.max_updates > 0 && st_.update >= cfg_.max_updates) ||
                            (cfg_.max_minutes > 0 && st_.elapsed_s >= cfg_.max_minutes * 60);
      if ((cfg_.valid_interval > 0 && st_.update % cfg_.valid_interval == 0) || at_limit) {
        if (after_validation(validate())) stop = "early stopping";
      } else if (cfg_.save_interval > 0 && st_.update % cfg_.save_interval == 0) {
        save("interval");
      }
      // A stop request is taken after the update's own validation: stopping between the two
      // saved an update whose validation no resume would ever run.
      if (stop.empty() && (group_ ? stop_asked : stop_requested())) stop = "interrupted";
      if (stop.empty()) stop = limit_reached();
    }
    if (st_.batch_in_epoch >= batches.size()) {
      if (cfg_.valid_interval == 0 && stop.empty() && after_validation(validate())) stop = "early stopping";
      ++st_.epoch;
      st_.batch_in_epoch = 0;
    }
  }
  comm_s_total += comm_s;
  if (bar) bar->finish();
  if (stop == "interrupted") {
    save("interrupt");
    log_ << "interrupted: saved " << (fs::path(cfg_.save_dir) / "checkpoint_last.ykp").string()
         << "; run the same command again to resume" << std::endl;
  }
  result.updates = st_.update;
  result.epochs = st_.epoch;
  result.best = st_.best;
  result.stop_reason = stop;
  result.train_seconds = st_.elapsed_s;
  // Over the whole run (resumed parts too), validation time left out.
  // A run too short to time (a resumed run that was already finished) reports 0, not a rate
  // divided by almost nothing.
  const double train_s = st_.elapsed_s - st_.valid_s;
  result.tokens_per_s = train_s > 0.01 ? double(st_.tokens) / train_s : 0.0;
  result.comm_wait_s = comm_s_total;
  nlohmann::json end = {{"type", "end"}, {"update", st_.update}, {"epoch", st_.epoch}, {"reason", stop},
                        {"best", std::isnan(st_.best) ? nlohmann::json() : nlohmann::json(st_.best)},
                        {"tokens_per_s", result.tokens_per_s}, {"elapsed_s", st_.elapsed_s}};
  if (group_) end["comm_wait_s"] = comm_s_total, end["world_size"] = world();
  record(end);
  log_ << "done: " << stop << " after " << st_.update << " updates, " << format_duration(st_.elapsed_s)
       << ", " << std::llround(result.tokens_per_s) << " tokens/s";
  // This session's share only: a resumed run's earlier wall time has no measured waiting.
  if (group_)
    log_ << " on " << world() << " ranks; waiting for the others took "
         << std::lround(100 * comm_s_total / std::max(1e-9, st_.elapsed_s - elapsed_before)) << "% of this session's time";
  log_ << std::endl;
  return result;
}

}  // namespace

TrainResult train(Config cfg, std::ostream& log, const ValidationDecoder& decode) {
  if (cfg.data.empty()) throw InputError("no training data: set `data = DIR` (a directory from `yoke prepare`)");
  cfg.validate();  // a bad value is reported before any data is read
  fill_vocab_sizes(cfg);
  cfg.validate();
  const DistributedEnv env = read_distributed_env();
  if (env.distributed() && compat::device_from_name(name_of(cfg.device)).is_cuda())
    throw InputError("distributed training runs on the CPU (Gloo) in this version; device = " + std::string(name_of(cfg.device)) +
                     " with WORLD_SIZE > 1 needs NCCL, which yoke does not drive yet");
  // Rank 0 writes save_dir; the others only read the data.
  std::optional<DirLock> lock;
  if (env.rank == 0) {
    std::error_code ec;
    fs::create_directories(cfg.save_dir, ec);
    if (ec) throw input_error(cfg.save_dir, 0, "cannot create save_dir: " + ec.message());
    // One run per save_dir; what a killed run left half-written goes before anything is read.
    lock.emplace(lock_file_in(cfg.save_dir), cfg.save_dir);
    remove_stale_temporaries(cfg.save_dir);
  }
  std::unique_ptr<ProcessGroup> group;
  if (env.distributed()) group = ProcessGroup::connect(env, cfg.dist_timeout);
  static std::ostream silent(nullptr);  // the log of ranks other than 0
  return Trainer(std::move(cfg), env.rank == 0 ? log : silent, decode, std::move(group), env).run();
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() { return g_signals.load() > 0; }

int stop_signal() { return g_first_signal.load(); }

}  // namespace yoke
