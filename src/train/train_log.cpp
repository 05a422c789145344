#include "train/train_log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "train/collectives.h"
#include "train/process_group.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"
#include "util/regular_file.h"
#include "util/json_file.h"

namespace yoke {

class MetricsLog {
 public:
  MetricsLog(const std::string& path, int64_t resumed_update) : path_(path) {
    require_regular_file(path, "metrics log");  // a FIFO here would block the run before its first update
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

namespace {

nlohmann::json or_null(double x) { return std::isnan(x) ? nlohmann::json() : nlohmann::json(x); }

std::string fixed(double x, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << x;
  return s.str();
}

}  // namespace

TrainLog::TrainLog(const Config& cfg, std::ostream& log, ProcessGroup* group, const at::Device& device)
    : cfg_(cfg), log_(log), group_(group), device_(device) {
  loss_acc_ = at::zeros({}, at::TensorOptions(at::kDouble).device(device));
  nll_acc_ = at::zeros_like(loss_acc_);
  bridge_acc_ = at::zeros_like(loss_acc_);
}

TrainLog::~TrainLog() = default;

void TrainLog::open_metrics(const std::string& path, int64_t resumed_update) {
  metrics_ = std::make_unique<MetricsLog>(path, resumed_update);
}

void TrainLog::record(const nlohmann::json& j) {
  if (metrics_) metrics_->write(j);
}

void TrainLog::summary(int64_t params, const EmbeddingCount& counts, size_t train_size, const std::string& unit,
                       size_t gradient_buckets) {
  log_ << "model: " << params << " parameters | Emb. " << counts.emb << " | Red. " << fixed(100 * counts.red(), 1)
       << "% | tie " << name_of(cfg_.tie) << " | output " << name_of(cfg_.output);
  if (cfg_.bridging == Bridging::direct) log_ << " | bridging direct, weight " << cfg_.bridging_weight;
  log_ << " | " << train_size << " training " << unit << std::endl;
  if (device_.is_cuda()) log_ << "device: cuda" << (cfg_.amp ? " (bf16 autocast, fp32 weights, TF32)" : " (fp32, TF32)") << std::endl;
  if (group_) {
    const int world = group_->size();
    log_ << "distributed: " << world << " ranks (Gloo), " << at::get_num_threads()
         << (at::get_num_threads() == 1 ? " thread" : " threads") << " each, " << gradient_buckets << " gradient bucket"
         << (gradient_buckets == 1 ? "" : "s") << ", " << cfg_.update_freq * world << " batches per update" << std::endl;
  }
}

void TrainLog::start(int64_t params, const EmbeddingCount& counts, bool resumed, int64_t update,
                     const nlohmann::json& init_from) {
  record({{"type", "start"}, {"params", params}, {"emb", counts.emb}, {"red", counts.red()}, {"resumed", resumed},
          {"update", update}, {"world_size", group_ ? group_->size() : 1}, {"init_from", init_from},
          {"config", cfg_.to_json()}});
}

void TrainLog::begin(const LoopState& st, const RunClock& clock, double total_updates) {
  if (!group_ || group_->rank() == 0) bar_.emplace("train", total_updates, "upd", 30.0, double(st.update));
  elapsed_before_ = clock.before();
  tokens_before_ = st.tokens;
}

std::string TrainLog::bar_text(const LoopState& st, double rate, double lr) const {
  std::ostringstream s;
  s << "epoch " << st.epoch << " | loss " << shown_loss_;
  if (!shown_bridge_.empty()) s << " | bridge " << shown_bridge_;
  s << " | " << fixed(rate, 0) << " tok/s | lr "
    << std::scientific << std::setprecision(2) << lr;
  if (cfg_.max_minutes > 0) s << " | " << format_duration(cfg_.max_minutes * 60 - st.elapsed_s) << " left";
  return s.str();
}

void TrainLog::after_update(const LoopState& st, const StepResult& s, bool log_line) {
  if (s.grad_paths) {
    const GradientPaths& gp = *s.grad_paths;
    record({{"type", "grad_paths"}, {"update", st.update}, {"share_output", gp.share_output()},
            {"input_sq", gp.input_sq}, {"output_sq", gp.output_sq}, {"cosine_ab", or_null(gp.cosine_ab)}});
  }
  for (const auto& l : s.losses) {
    loss_acc_ += l.loss;
    nll_acc_ += l.nll;
    if (l.bridge.defined()) bridge_acc_ += l.bridge;
    tok_acc_ += l.tokens;
  }
  comm_s_ += s.comm_s;
  const double rate = double(st.tokens - tokens_before_) / std::max(1e-9, st.elapsed_s - elapsed_before_);
  if (log_line) {
    at::Tensor sums = at::stack({loss_acc_.cpu(), nll_acc_.cpu(), at::scalar_tensor(double(tok_acc_), at::kDouble),
                                 bridge_acc_.cpu()});
    sum_over_ranks(group_, sums);
    const double n = std::max(1.0, sums[2].item<double>());
    const double l = sums[0].item<double>() / n / std::log(2.0);
    const double nl = sums[1].item<double>() / n / std::log(2.0);
    nlohmann::json line = {{"type", "train"}, {"epoch", st.epoch}, {"update", st.update}, {"loss", l}, {"nll", nl},
                           {"ppl", std::pow(2.0, nl)}, {"lr", s.lr}, {"gnorm", s.gnorm.item<double>()},
                           {"tokens_per_s", rate}, {"elapsed_s", st.elapsed_s}};
    if (group_) line["comm_wait_s"] = comm_s_;
    if (cfg_.bridging == Bridging::direct) {
      // The term per target token (a squared distance, not bits) and its weighted share of the loss.
      const double bridge = sums[3].item<double>() / n;
      const double share = cfg_.bridging_weight * sums[3].item<double>() / std::max(1e-30, sums[0].item<double>());
      line["bridge"] = bridge;
      line["bridge_share"] = share;
      shown_bridge_ = fixed(bridge, 3) + " (" + fixed(100 * share, 1) + "%)";
    }
    record(line);
    comm_s_total_ += comm_s_;
    comm_s_ = 0;
    loss_acc_.zero_();
    nll_acc_.zero_();
    bridge_acc_.zero_();
    tok_acc_ = 0;
    shown_loss_ = fixed(l, 3);
  }
  if (bar_) bar_->update(double(st.update), bar_text(st, rate, s.lr));
}

void TrainLog::valid(const LoopState& st, double loss, double nll, double bleu, bool best) {
  // loss and nll are in bits per token (fairseq's convention), so ppl = 2^nll; BLEU only where computed.
  clear_progress_line();  // on a terminal the training bar's line is open
  log_ << "valid | epoch " << st.epoch << " | update " << st.update << " | loss " << fixed(loss, 3) << " | nll "
       << fixed(nll, 3) << " | ppl " << fixed(std::pow(2.0, nll), 2)
       << (std::isnan(bleu) ? "" : " | bleu " + fixed(bleu, 2)) << (best ? " | best" : "") << std::endl;
  record({{"type", "valid"}, {"epoch", st.epoch}, {"update", st.update}, {"loss", loss}, {"nll", nll},
          {"ppl", std::pow(2.0, nll)}, {"bleu", or_null(bleu)}, {"best", best}});
}

void TrainLog::end_progress() {
  if (bar_) bar_->finish();
}

TrainResult TrainLog::end(const LoopState& st, const std::string& stop) {
  comm_s_total_ += comm_s_;
  comm_s_ = 0;
  TrainResult result;
  result.updates = st.update;
  result.epochs = st.epoch;
  result.best = st.best;
  result.stop_reason = stop;
  result.train_seconds = st.elapsed_s;
  // Over the whole run (resumed parts too), validation time left out.
  // A run too short to time (a resumed run that was already finished) reports 0, not a rate
  // divided by almost nothing.
  const double train_s = st.elapsed_s - st.valid_s;
  result.tokens_per_s = train_s > 0.01 ? double(st.tokens) / train_s : 0.0;
  result.comm_wait_s = comm_s_total_;
  nlohmann::json end = {{"type", "end"}, {"update", st.update}, {"epoch", st.epoch}, {"reason", stop},
                        {"best", or_null(st.best)}, {"tokens_per_s", result.tokens_per_s}, {"elapsed_s", st.elapsed_s}};
  if (group_) end["comm_wait_s"] = comm_s_total_, end["world_size"] = group_->size();
  record(end);
  clear_progress_line();
  log_ << "done: " << stop << " after " << st.update << " updates, " << format_duration(st.elapsed_s) << ", "
       << std::llround(result.tokens_per_s) << " tokens/s";
  // This session's share only: a resumed run's earlier wall time has no measured waiting.
  if (group_)
    log_ << " on " << group_->size() << " ranks; waiting for the others took "
         << std::lround(100 * comm_s_total_ / std::max(1e-9, st.elapsed_s - elapsed_before_)) << "% of this session's time";
  log_ << std::endl;
  return result;
}

}  // namespace yoke
