#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "batch/batch.h"
#include "batch/batching.h"
#include "batch/lm_batch.h"
#include "store/checkpoint.h"
#include "store/model_files.h"
#include "store/run_folder.h"
#include "store/model_store.h"
#include "text/binarized.h"
#include "text/corpus.h"
#include "text/data_meta.h"
#include "text/vocab_files.h"
#include "train/collectives.h"
#include "train/flat_adam.h"
#include "train/gradient_sync.h"
#include "train/process_group.h"
#include "train/resume.h"
#include "train/schedule.h"
#include "train/train_log.h"
#include "train/train_step.h"
#include "train/training_data.h"
#include "train/validation.h"
#include "util/atomic_file.h"
#include "util/dir_lock.h"
#include "util/error.h"
#include "util/progress.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

// The loop reads as step (train/train_step.h), report (train/train_log.h) and policy
// (train/schedule.h); this class owns the data, the model and the checkpoints.
class Trainer {
 public:
  // group: the other ranks of a distributed run, or null for one process. Only rank 0 (the
  // writer) logs, records metrics and writes checkpoints; `log` is a null stream elsewhere.
  Trainer(Config cfg, std::ostream& log, ValidationDecoder decode, std::unique_ptr<ProcessGroup> group,
          const DistributedEnv& env)
      : cfg_(std::move(cfg)), schedule_(cfg_), log_(log), decode_(std::move(decode)), group_(std::move(group)), env_(env) {}
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
  int world() const { return group_ ? group_->size() : 1; }
  void save(const std::string& reason);
  // Stops the run with an error naming the update when a weight is NaN or infinite (the loss
  // diverged): nothing non-finite is ever saved, validated or made best.
  void check_finite() const;
  // Validates, reports, saves (checkpoint_best too when better); true = patience used up.
  bool validate_and_save();
  void check_corpus(const CorpusShard& shard, const std::string& file) const;

  Config cfg_;
  Schedule schedule_;
  std::ostream& log_;
  ValidationDecoder decode_;
  at::Device device_{at::kCPU};
  std::shared_ptr<Transformer> model_;
  std::unique_ptr<FlatAdam> opt_;
  std::unique_ptr<TrainingData> train_;
  ValidationSet valid_;
  nlohmann::json vocab_checksums_;  // of the data's vocabularies, recorded in every checkpoint
  nlohmann::json train_checksums_;  // of the training files, recorded in every checkpoint (train/resume.h)
  std::string run_id_;              // this run's identity, in every checkpoint, kept on resume (store/run_folder.h)
  LoopState st_;
  std::unique_ptr<ProcessGroup> group_;
  DistributedEnv env_;
  std::unique_ptr<GradientSync> sync_;
  std::unique_ptr<TrainLog> report_;
};

// What every file of the training and validation data must pass before the first update.
void Trainer::check_corpus(const CorpusShard& shard, const std::string& file) const {
  const TokenizedCorpus& c = shard.corpus;
  check_token_ids(c, cfg_.src_vocab_size, cfg_.tgt_vocab_size, file);
  if (!lm() && c.src_tokens.empty())
    throw input_error(file, 0, "has no source side: it was prepared for a language model (yoke prepare --lm); set task = lm");
  // A sequence longer than the position table would stop training mid-run: refuse it now.
  for (const auto* lengths : {&shard.src_lengths, &shard.tgt_lengths})
    for (size_t i = 0; i < lengths->size(); ++i)
      if (int64_t((*lengths)[i]) > cfg_.max_positions)
        throw input_error(file, 0,
                          "sequence " + std::to_string(i + 1) + " has " + std::to_string((*lengths)[i]) +
                              " positions with its end marker, more than max_positions = " +
                              std::to_string(cfg_.max_positions) + ": raise max_positions, or prepare with --max-len " +
                              std::to_string(cfg_.max_positions - 1));
}

void Trainer::load_data() {
  const fs::path dir(cfg_.data);
  CorpusHooks hooks;
  if (blocks()) hooks.shape = [this](TokenizedCorpus c) { return stream_blocks(c, cfg_.lm_block); };
  hooks.check = [this](const CorpusShard& s, const std::string& file) {
    if (s.corpus.size() == 0) throw input_error(file, 0, "no training pairs");
    check_corpus(s, file);
  };
  hooks.src_lengths = [this](const TokenizedCorpus& c) { return src_lengths(c); };
  hooks.tgt_lengths = [this](const TokenizedCorpus& c) { return tgt_lengths(c); };
  hooks.batch = [this](const TokenizedCorpus& c, const std::vector<uint32_t>& idx) { return batch(c, idx); };
  train_ = std::make_unique<TrainingData>(training_files(cfg_.data), size_t(cfg_.max_tokens), uint64_t(cfg_.seed), hooks);
  CorpusShard valid;
  valid.corpus = load_binarized((dir / "valid.bin").string());
  if (blocks()) valid.corpus = stream_blocks(valid.corpus, cfg_.lm_block);
  valid.src_lengths = src_lengths(valid.corpus);
  valid.tgt_lengths = tgt_lengths(valid.corpus);
  check_corpus(valid, (dir / "valid.bin").string());
  valid_.corpus = std::move(valid.corpus);
  valid_.src_lengths = std::move(valid.src_lengths);
  valid_.tgt_lengths = std::move(valid.tgt_lengths);
  if (!lm() && fs::exists(dir / "valid.tgt.txt")) valid_.refs = read_lines((dir / "valid.tgt.txt").string());
  valid_.tgt_vocab = Vocab::load(target_vocab_path(cfg_.data));
  // The model directory carries its vocabularies, so `yoke translate --model DIR` needs nothing else.
  // check_resume() has made sure they are the ones a resumed model was trained with; those of
  // the other layout (joint or separate) go, so that no stale file is picked up instead.
  if (!writer()) return;
  fs::create_directories(cfg_.save_dir);
  for (const char* f : kVocabularyFiles) {
    const auto to = fs::path(cfg_.save_dir) / f;
    if (fs::exists(dir / f)) copy_file_atomically((dir / f).string(), to.string());
    else if (fs::exists(to)) fs::remove(to);
  }
}

void Trainer::check_finite() const {
  if (at::isfinite(opt_->params()).all().item<bool>()) return;
  const auto last = fs::path(cfg_.save_dir) / kCheckpointLast;
  throw RunError("update " + std::to_string(st_.update) + ": the weights are no longer finite (NaN or infinite): " +
                 "training diverged (lr = " + c10::str(cfg_.lr) + ", clip_norm = " + c10::str(cfg_.clip_norm) + "). " +
                 (fs::exists(last) ? last.string() + " keeps the last finite weights; resume from it with a lower lr "
                                                     "or clip_norm set, or start again"
                                   : "nothing was saved; start again with a lower lr or clip_norm set"));
}

bool Trainer::validate_and_save() {
  check_finite();
  const auto t0 = std::chrono::steady_clock::now();
  const ValidResult v = validate(*model_, valid_, cfg_, device_, group_.get(),
                                 [this](const std::vector<uint32_t>& idx) { return batch(valid_.corpus, idx); }, decode_);
  st_.valid_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool better = schedule_.note_validation(st_, v.loss, v.bleu);
  report_->valid(st_, v.loss, v.nll, v.bleu, better);
  save("valid");
  if (better && writer())
    copy_file_atomically((fs::path(cfg_.save_dir) / kCheckpointLast).string(),
                         (fs::path(cfg_.save_dir) / kCheckpointBest).string());
  return schedule_.out_of_patience(st_);
}

void Trainer::save(const std::string& reason) {
  if (!writer()) return;
  check_finite();
  Checkpoint c;
  // The world size is a note, not a dependency: any number of ranks resumes the checkpoint.
  c.meta = {{"config", cfg_.to_json()}, {"state", st_.to_json()}, {"optimizer_steps", opt_->steps()},
            {"reason", reason}, {"format", 1}, {"world_size", world()},
            {"batches_per_update", int64_t(cfg_.update_freq) * world()}, {"vocab", vocab_checksums_},
            {"train_data", train_checksums_}, {"run", run_id_}};
  put_model_weights(c, module_state(*model_));
  const fs::path dir(cfg_.save_dir);
  // checkpoint_last first: a kill before the numbered copy below leaves it to repair_numbered on
  // resuming, where the other order could leave a folder of checkpoints with nothing to resume
  // from (which a new run would then refuse, store/run_folder.h).
  Checkpoint last = c;
  last.tensors["optimizer.exp_avg"] = opt_->exp_avg();
  last.tensors["optimizer.exp_avg_sq"] = opt_->exp_avg_sq();
  save_checkpoint((dir / kCheckpointLast).string(), last);
  // Numbered checkpoints hold weights only: they exist for averaging and evaluation.
  if (saves_numbered_copy(reason)) {
    save_checkpoint((dir / numbered_checkpoint_name(st_.update)).string(), c);
    prune_numbered_checkpoints(dir.string(), cfg_.keep_last);
  }
}

TrainResult Trainer::run() {
  // threads = 0 keeps LibTorch's default, or OMP_NUM_THREADS where set (parallel test runs);
  // workers on one machine share its cores. Debian's 1.13 counts 1 thread on a 2-core machine,
  // leaving the products to OpenBLAS's own pool, one thread per core (docs/performance.md, "What
  // makes it fast"). threads = N sets both pools to N.
  if (cfg_.threads > 0) {
    compat::set_compute_threads(cfg_.threads);
  } else if (env_.local_world_size > 1 && !std::getenv("OMP_NUM_THREADS")) {
    compat::set_compute_threads(std::max(1, int(std::thread::hardware_concurrency()) / env_.local_world_size));
  }
  device_ = compat::device_from_name(name_of(cfg_.device));
  if (device_.is_cuda()) compat::allow_tf32();
  std::optional<InitSource> init_source;  // init_from, for a run that does not resume
  if (writer()) {
    vocab_checksums_ = vocab_checksums(cfg_.data);
    train_checksums_ = training_files_checksums(cfg_.data);
    check_resume(cfg_, vocab_checksums_, train_checksums_, log_);
    const fs::path last = fs::path(cfg_.save_dir) / kCheckpointLast;
    if (fs::exists(last)) {
      run_id_ = read_checkpoint_header(last.string()).meta.value("run", std::string());
    } else {
      init_source = check_init_from(cfg_, vocab_checksums_);  // its refusals say more (init_from naming save_dir)
      check_new_run_folder(cfg_.save_dir);
    }
    if (run_id_.empty()) run_id_ = new_run_id();  // a new run, or one resumed from before runs had one
  }
  load_data();
  at::manual_seed(uint64_t(cfg_.seed));
  if (cfg_.tie == Tie::shared_private && writer()) {
    const auto copy = fs::path(cfg_.save_dir) / kPairsFile;
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

  report_ = std::make_unique<TrainLog>(cfg_, log_, group_.get(), device_);
  const auto counts = count_embeddings(model_->embeddings->spec());
  const int64_t total = opt_->params().numel();
  report_->summary(total, counts, train_->pairs(), blocks() ? "blocks" : lm() ? "sentences" : "pairs",
                   sync_ ? sync_->buckets() : 0);
  std::optional<LoopState> resumed_at;
  if (writer()) resumed_at = resume(cfg_, world(), *model_, *opt_, log_);
  if (resumed_at) st_ = *resumed_at;
  else if (init_source) load_init_weights(*init_source, *model_, log_);  // rank 0's weights go to every rank below
  const bool resumed = share_start(group_.get(), *opt_, st_, resumed_at.has_value());
  if (resumed && writer()) {
    repair_best(cfg_, st_, log_);  // first: it may need a numbered checkpoint that keep_last prunes below
    repair_numbered(cfg_, st_, log_);
  }
  if (writer()) report_->open_metrics((fs::path(cfg_.save_dir) / kMetricsLog).string(), resumed ? st_.update : -1);
  report_->start(total, counts, resumed, st_.update, init_source ? init_source->to_json() : nlohmann::json());

  TrainStep step(cfg_, *model_, *opt_, device_, group_.get(), sync_.get());
  const RunClock clock(st_.elapsed_s);
  report_->begin(st_, clock, schedule_.total_updates(train_->batches_per_epoch(), step.batches_per_update()));
  std::string stop = schedule_.limit_reached(st_);  // a resumed run may be at its limit already
  while (stop.empty()) {
    if (schedule_.epochs_done(st_)) { stop = "max_epochs"; break; }
    const TrainingData::Epoch batches = train_->epoch(st_.epoch);
    // Declared after `batches`, so that a pending build finishes before they go.
    BatchPrefetch prefetch(batches.size, batches.make);
    while (st_.batch_in_epoch < batches.size && stop.empty()) {
      const StepResult s = step.update(st_, prefetch, clock);
      report_->after_update(st_, s, schedule_.log_now(st_));
      if (schedule_.log_now(st_)) check_finite();  // the log has just waited for the loss anyway
      bool out_of_patience = false;
      if (schedule_.validate_now(st_)) out_of_patience = validate_and_save();
      else if (schedule_.save_now(st_)) save("interval");
      // One process looks at the signal again: one that came during validation stops now.
      stop = schedule_.after_update(st_, out_of_patience, group_ ? s.stop_asked : stop_requested());
    }
    if (st_.batch_in_epoch >= batches.size) {
      if (schedule_.validate_at_epoch_end() && stop.empty() && validate_and_save()) stop = "early stopping";
      ++st_.epoch;
      st_.batch_in_epoch = 0;
    }
  }
  report_->end_progress();
  if (stop == "interrupted") {
    save("interrupt");
    clear_progress_line();
    log_ << "interrupted: saved " << (fs::path(cfg_.save_dir) / kCheckpointLast).string()
         << "; run the same command again to resume" << std::endl;
  }
  return report_->end(st_, stop);
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

}  // namespace yoke
