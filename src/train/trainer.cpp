#include "train/trainer.h"

#include <csignal>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "batch/batch.h"
#include "batch/batching.h"
#include "batch/lm_batch.h"
#include "eval/bleu.h"
#include "loss/batch_loss.h"
#include "loss/loss.h"
#include "text/binarized.h"
#include "text/corpus.h"
#include "text/data_meta.h"
#include "train/checkpoint.h"
#include "train/flat_adam.h"
#include "train/model_store.h"
#include "util/atomic_file.h"
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
  int bad_validations = 0;
  double elapsed_s = 0;
  double valid_s = 0;  // of elapsed_s, spent validating (not training)
  int64_t tokens = 0;
  nlohmann::json to_json() const {
    return {{"epoch", epoch}, {"batch_in_epoch", batch_in_epoch}, {"update", update},
            {"best", std::isnan(best) ? nlohmann::json() : nlohmann::json(best)},
            {"bad_validations", bad_validations}, {"elapsed_s", elapsed_s}, {"valid_s", valid_s}, {"tokens", tokens}};
  }
  static LoopState from_json(const nlohmann::json& j) {
    LoopState s;
    s.epoch = j.at("epoch");
    s.batch_in_epoch = j.at("batch_in_epoch");
    s.update = j.at("update");
    s.best = j.at("best").is_null() ? NAN : j.at("best").get<double>();
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
  MetricsLog(const std::string& path, int64_t resumed_update) {
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
  }

 private:
  std::ofstream out_;
};

struct ValidResult {
  double loss = 0, nll = 0, bleu = NAN;
};

class Trainer {
 public:
  Trainer(Config cfg, std::ostream& log, ValidationDecoder decode)
      : cfg_(std::move(cfg)), log_(log), decode_(std::move(decode)) {}
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
  void save(const std::string& reason);
  bool resume();
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
  LoopState st_;
  std::unique_ptr<MetricsLog> metrics_;
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
  if (!lm() && fs::exists(dir / "valid.tgt.txt")) valid_refs_ = read_lines((dir / "valid.tgt.txt").string());
  tgt_vocab_ = Vocab::load(target_vocab_path(cfg_.data));
  // The model directory carries its vocabularies, so `yoke translate --model DIR` needs nothing else.
  fs::create_directories(cfg_.save_dir);
  for (const char* f : {"spm.model", "spm.vocab", "spm.src.model", "spm.src.vocab", "spm.tgt.model", "spm.tgt.vocab"})
    if (fs::exists(dir / f)) copy_file_atomically((dir / f).string(), (fs::path(cfg_.save_dir) / f).string());
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
  double loss = 0, nll = 0;
  int64_t tokens = 0;
  for (auto& idx : make_token_batches(src_lengths(valid_), tgt_lengths(valid_), size_t(cfg_.max_tokens), false, 0)) {
    auto out = forward(batch(valid_, idx));
    loss += out.loss.item<double>();
    nll += out.nll.item<double>();
    tokens += out.tokens;
  }
  r.loss = loss / std::max<int64_t>(1, tokens) / std::log(2.0);
  r.nll = nll / std::max<int64_t>(1, tokens) / std::log(2.0);
  if (cfg_.valid_bleu && decode_ && !valid_refs_.empty()) {
    size_t n = valid_.size();
    if (cfg_.valid_bleu_sentences > 0) n = std::min(n, size_t(cfg_.valid_bleu_sentences));
    std::vector<std::vector<int>> sources(n);
    for (size_t i = 0; i < n; ++i) sources[i].assign(valid_.src(i), valid_.src(i) + valid_.src_len(i));
    auto hyps_ids = decode_(*model_, sources, cfg_.max_len_a, cfg_.max_len_b);
    std::vector<std::string> hyps(n), refs(valid_refs_.begin(), valid_refs_.begin() + n);
    for (size_t i = 0; i < n; ++i) hyps[i] = tgt_vocab_.decode(hyps_ids[i]);
    r.bleu = corpus_bleu(hyps, refs).score;
  }
  model_->train();
  st_.valid_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

bool Trainer::after_validation(const ValidResult& v) {
  const bool use_bleu = cfg_.early_stop_metric == "bleu" && !std::isnan(v.bleu);
  const double metric = use_bleu ? v.bleu : v.loss;
  const bool better = std::isnan(st_.best) || (use_bleu ? metric > st_.best : metric < st_.best);
  if (better) { st_.best = metric; st_.bad_validations = 0; } else { ++st_.bad_validations; }
  char line[200];
  // loss and nll are in bits per token (fairseq's convention), so ppl = 2^nll; BLEU only where computed.
  char bleu[32] = "";
  if (!std::isnan(v.bleu)) std::snprintf(bleu, sizeof bleu, " | bleu %.2f", v.bleu);
  std::snprintf(line, sizeof line, "valid | epoch %d | update %lld | loss %.3f | nll %.3f | ppl %.2f%s%s", st_.epoch,
                (long long)st_.update, v.loss, v.nll, std::pow(2.0, v.nll), bleu, better ? " | best" : "");
  log_ << line << std::endl;
  metrics_->write({{"type", "valid"}, {"epoch", st_.epoch}, {"update", st_.update}, {"loss", v.loss}, {"nll", v.nll},
                   {"ppl", std::pow(2.0, v.nll)}, {"bleu", std::isnan(v.bleu) ? nlohmann::json() : nlohmann::json(v.bleu)},
                   {"best", better}});
  save("valid");
  if (better)
    copy_file_atomically((fs::path(cfg_.save_dir) / "checkpoint_last.ykp").string(),
                         (fs::path(cfg_.save_dir) / "checkpoint_best.ykp").string());
  return cfg_.patience > 0 && st_.bad_validations >= cfg_.patience;
}

void Trainer::save(const std::string& reason) {
  Checkpoint c;
  c.meta = {{"config", cfg_.to_json()}, {"state", st_.to_json()}, {"optimizer_steps", opt_->steps()},
            {"reason", reason}, {"format", 1}};
  for (auto& [name, t] : module_state(*model_)) c.tensors["model." + name] = t;
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

bool Trainer::resume() {
  const auto path = fs::path(cfg_.save_dir) / "checkpoint_last.ykp";
  if (!fs::exists(path)) return false;
  auto c = load_checkpoint(path.string());
  std::map<std::string, at::Tensor> weights;
  for (auto& [name, t] : c.tensors)
    if (name.rfind("model.", 0) == 0) weights[name.substr(6)] = t;
  load_module_state(*model_, weights, path.string());
  opt_->exp_avg().copy_(c.tensors.at("optimizer.exp_avg"));
  opt_->exp_avg_sq().copy_(c.tensors.at("optimizer.exp_avg_sq"));
  opt_->set_steps(c.meta.at("optimizer_steps"));
  st_ = LoopState::from_json(c.meta.at("state"));
  log_ << "resumed from " << path.string() << " at epoch " << st_.epoch << ", update " << st_.update << std::endl;
  return true;
}

TrainResult Trainer::run() {
  // threads = 0 keeps LibTorch's default: the cores, or OMP_NUM_THREADS where set (parallel test runs).
  if (cfg_.threads > 0) at::set_num_threads(cfg_.threads);
  device_ = compat::device_from_name(cfg_.device);
  if (device_.is_cuda()) compat::allow_tf32();
  load_data();
  at::manual_seed(uint64_t(cfg_.seed));
  if (cfg_.tie == Tie::shared_private) {
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

  const auto counts = count_embeddings(model_->embeddings->spec());
  const int64_t total = opt_->params().numel();
  char summary[240];
  std::snprintf(summary, sizeof summary, "model: %lld parameters | Emb. %lld | Red. %.1f%% | tie %s | output %s | %zu training %s",
                (long long)total, (long long)counts.emb, 100 * counts.red(), name_of(cfg_.tie), name_of(cfg_.output), train_.size(),
                blocks() ? "blocks" : lm() ? "sentences" : "pairs");
  log_ << summary << std::endl;
  if (device_.is_cuda()) log_ << "device: cuda" << (cfg_.amp ? " (bf16 autocast, fp32 weights, TF32)" : " (fp32, TF32)") << std::endl;
  const bool resumed = resume();
  metrics_ = std::make_unique<MetricsLog>((fs::path(cfg_.save_dir) / "metrics.jsonl").string(),
                                          resumed ? st_.update : -1);
  metrics_->write({{"type", "start"}, {"params", total}, {"emb", counts.emb}, {"red", counts.red()},
                   {"resumed", resumed}, {"update", st_.update}, {"config", cfg_.to_json()}});

  TrainResult result;
  size_t batches_per_epoch = epoch_batches(st_.epoch).size();
  double total_updates = cfg_.max_updates > 0 ? cfg_.max_updates
                         : cfg_.max_epochs > 0 ? double(cfg_.max_epochs) * double(batches_per_epoch) / cfg_.update_freq
                                               : 0;
  Progress bar("train", total_updates, "upd", 30.0);
  const double elapsed_before = st_.elapsed_s;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return elapsed_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int64_t tokens_before = st_.tokens;
  // Loss sums stay on the device until a log line needs them: no host sync inside the step.
  at::Tensor loss_acc = at::zeros({}, at::TensorOptions(at::kDouble).device(device_)), nll_acc = at::zeros_like(loss_acc);
  int64_t tok_acc = 0;
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
    auto take_batch = [&]() {
      const size_t i = st_.batch_in_epoch++;
      Batch b = next.valid() && next_index == i ? next.get() : batch(train_, batches[i]);
      if (i + 1 < batches.size()) {
        next_index = i + 1;
        next = std::async(std::launch::async, [this, &batches, j = i + 1] { return batch(train_, batches[j]); });
      }
      return b;
    };
    while (st_.batch_in_epoch < batches.size() && stop.empty()) {
      // Dropout noise is a function of (seed, update): a resumed run draws the same masks.
      at::manual_seed(uint64_t(cfg_.seed) * 7919ull + uint64_t(st_.update) + 1);
      opt_->zero_grad();
      int64_t tgt_tokens = 0;
      for (int k = 0; k < cfg_.update_freq && st_.batch_in_epoch < batches.size(); ++k) {
        auto b = take_batch();
        auto out = forward(b);
        out.loss.backward();
        loss_acc += out.loss.detach();
        nll_acc += out.nll.detach();
        tok_acc += out.tokens;
        tgt_tokens += out.tokens;
        st_.tokens += b.src_tokens + b.tgt_tokens;
      }
      if (cfg_.log_grad_paths) {
        const auto gp = model_->embeddings->take_gradient_paths();
        metrics_->write({{"type", "grad_paths"}, {"update", st_.update + 1}, {"share_output", gp.share_output()},
                         {"input_sq", gp.input_sq}, {"output_sq", gp.output_sq},
                         {"cosine_ab", std::isnan(gp.cosine_ab) ? nlohmann::json() : nlohmann::json(gp.cosine_ab)}});
      }
      opt_->scale_grad(1.0 / double(std::max<int64_t>(1, tgt_tokens)));  // per-token gradient
      const at::Tensor gnorm = opt_->clip_grad_norm(cfg_.clip_norm);
      const double lr = inverse_sqrt_lr(cfg_.lr, cfg_.warmup, st_.update + 1);
      opt_->step(lr);
      ++st_.update;
      st_.elapsed_s = elapsed();
      const double rate = double(st_.tokens - tokens_before) / std::max(1e-9, st_.elapsed_s - elapsed_before);
      if (st_.update % std::max(1, cfg_.log_interval) == 0) {
        const double l = loss_acc.item<double>() / std::max<int64_t>(1, tok_acc) / std::log(2.0);
        const double nl = nll_acc.item<double>() / std::max<int64_t>(1, tok_acc) / std::log(2.0);
        metrics_->write({{"type", "train"}, {"epoch", st_.epoch}, {"update", st_.update}, {"loss", l}, {"nll", nl},
                         {"ppl", std::pow(2.0, nl)}, {"lr", lr}, {"gnorm", gnorm.item<double>()}, {"tokens_per_s", rate},
                         {"elapsed_s", st_.elapsed_s}});
        loss_acc.zero_();
        nll_acc.zero_();
        tok_acc = 0;
        char loss_text[32];
        std::snprintf(loss_text, sizeof loss_text, "%.3f", l);
        shown_loss = loss_text;
      }
      char extra[160];
      std::snprintf(extra, sizeof extra, "epoch %d | loss %s | %.0f tok/s | lr %.2e%s", st_.epoch,
                    shown_loss.c_str(), rate, lr,
                    cfg_.max_minutes > 0 ? (" | " + format_duration(cfg_.max_minutes * 60 - st_.elapsed_s) + " left").c_str() : "");
      bar.update(double(st_.update), extra);

      const bool at_limit = (cfg_.max_updates > 0 && st_.update >= cfg_.max_updates) ||
                            (cfg_.max_minutes > 0 && st_.elapsed_s >= cfg_.max_minutes * 60);
      if ((cfg_.valid_interval > 0 && st_.update % cfg_.valid_interval == 0) || at_limit) {
        if (after_validation(validate())) stop = "early stopping";
      } else if (cfg_.save_interval > 0 && st_.update % cfg_.save_interval == 0) {
        save("interval");
      }
      // A stop request is taken after the update's own validation: stopping between the two
      // saved an update whose validation no resume would ever run.
      if (stop.empty() && stop_requested()) stop = "interrupted";
      if (stop.empty()) stop = limit_reached();
    }
    if (st_.batch_in_epoch >= batches.size()) {
      if (cfg_.valid_interval == 0 && stop.empty() && after_validation(validate())) stop = "early stopping";
      ++st_.epoch;
      st_.batch_in_epoch = 0;
    }
  }
  bar.finish();
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
  metrics_->write({{"type", "end"}, {"update", st_.update}, {"epoch", st_.epoch}, {"reason", stop},
                   {"best", std::isnan(st_.best) ? nlohmann::json() : nlohmann::json(st_.best)},
                   {"tokens_per_s", result.tokens_per_s}, {"elapsed_s", st_.elapsed_s}});
  log_ << "done: " << stop << " after " << st_.update << " updates, " << format_duration(st_.elapsed_s)
       << ", " << std::llround(result.tokens_per_s) << " tokens/s" << std::endl;
  return result;
}

}  // namespace

void fill_vocab_sizes(Config& cfg) {
  if (cfg.data.empty()) return;
  const auto meta = DataMeta::read(cfg.data);
  cfg.src_vocab_size = meta.src_vocab_size;
  cfg.tgt_vocab_size = meta.tgt_vocab_size;
  cfg.joint_vocab = meta.joint;
}

TrainResult train(Config cfg, std::ostream& log, const ValidationDecoder& decode) {
  if (cfg.data.empty()) throw InputError("no training data: set `data = DIR` (a directory from `yoke prepare`)");
  cfg.validate();  // a bad value is reported before any data is read
  fill_vocab_sizes(cfg);
  cfg.validate();
  std::error_code ec;
  fs::create_directories(cfg.save_dir, ec);
  if (ec) throw input_error(cfg.save_dir, 0, "cannot create save_dir: " + ec.message());
  // One run per save_dir; what a killed run left half-written goes before anything is read.
  const DirLock lock(lock_file_in(cfg.save_dir), cfg.save_dir);
  remove_stale_temporaries(cfg.save_dir);
  return Trainer(std::move(cfg), log, decode).run();
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
