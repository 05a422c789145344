// What the training loop reports: rank 0's metrics.jsonl (the "start", "train", "grad_paths",
// "valid" and "end" records), the log lines and the progress bar. Loss sums are kept between
// log lines and summed over the ranks when a line needs them, so every rank calls
// after_update; only rank 0 writes.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "embed/sharing.h"
#include "train/train_state.h"
#include "train/train_step.h"
#include "train/trainer.h"
#include "util/progress.h"

namespace yoke {

class MetricsLog;

class TrainLog {
 public:
  // group: the other ranks, or null; `log` is a null stream on ranks other than 0.
  TrainLog(const Config& cfg, std::ostream& log, ProcessGroup* group, const at::Device& device);
  ~TrainLog();

  // Rank 0: opens metrics.jsonl, keeping the records up to `resumed_update` (a resumed run
  // replays the updates after its checkpoint, and their records would come twice); -1 starts
  // an empty file.
  void open_metrics(const std::string& path, int64_t resumed_update);
  void record(const nlohmann::json& j);  // to metrics.jsonl where open

  // The lines that open the log: the model's size and sharing, the device, the ranks.
  void summary(int64_t params, const EmbeddingCount& counts, size_t train_size, const std::string& unit,
               size_t gradient_buckets);
  // The "start" record; init_from: where a fine-tuning run's weights came from (null otherwise).
  void start(int64_t params, const EmbeddingCount& counts, bool resumed, int64_t update, const nlohmann::json& init_from);

  // Training begins at state st: starts the progress bar (rank 0) towards total_updates (0 = unknown).
  void begin(const LoopState& st, const RunClock& clock, double total_updates);
  // After each update (every rank: a log line sums the loss over the ranks). log_line: the
  // schedule's log_interval has come, write a "train" record.
  void after_update(const LoopState& st, const StepResult& s, bool log_line);
  void valid(const LoopState& st, double loss, double nll, double bleu, bool best);
  void end_progress();
  // The "end" record and the "done:" line; returns the run's result.
  TrainResult end(const LoopState& st, const std::string& stop);

  // Log texts, exposed for tests.
  std::string bar_text(const LoopState& st, double rate, double lr) const;

 private:
  const Config& cfg_;
  std::ostream& log_;
  ProcessGroup* group_;
  at::Device device_;
  std::unique_ptr<MetricsLog> metrics_;
  std::optional<Progress> bar_;
  double elapsed_before_ = 0;
  int64_t tokens_before_ = 0;
  // Loss sums stay on the device until a log line needs them: no host sync inside the step.
  at::Tensor loss_acc_, nll_acc_, bridge_acc_;  // bridge_acc_: bridging = direct's term, unweighted
  int64_t tok_acc_ = 0;
  double comm_s_ = 0, comm_s_total_ = 0;  // waiting for other ranks, since the last log line / in all
  std::string shown_loss_ = "-";          // until the first log_interval has a measured loss
  std::string shown_bridge_;              // bridging = direct: "0.123 (4.5%)", its term per token and share
};

}  // namespace yoke
