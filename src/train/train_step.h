// One update of the training loop: this rank's micro-batches of the global batch, forward and
// backward with seeded dropout, the gradient summed over the ranks and divided by the global
// batch's target tokens, clipping, and the optimizer step at the schedule's learning rate.
#pragma once
#include <functional>
#include <future>
#include <optional>
#include <vector>

#include "batch/batch.h"
#include "config/config.h"
#include "embed/sharing.h"
#include "loss/loss.h"
#include "train/train_state.h"

namespace yoke {

class FlatAdam;
class GradientSync;
class ProcessGroup;
class Transformer;

// The training objective of a batch, under bf16 autocast where amp is on (backward runs
// outside it, as autocast wants). Validation uses it too.
LossSums forward_loss(Transformer& model, const Batch& b, const at::Device& device, const Config& cfg);

// An epoch's batches, built on the training device; the next one is built on another thread
// while the current one trains. Declare it after the vector of batches it reads, so that a
// pending build finishes before they go.
class BatchPrefetch {
 public:
  using Make = std::function<Batch(const std::vector<uint32_t>& indices)>;
  using MakeAt = std::function<Batch(size_t i)>;  // batch i of the epoch; called from two threads
  BatchPrefetch(const std::vector<std::vector<uint32_t>>& batches, const Make& make)
      : size_(batches.size()), make_([&batches, make](size_t i) { return make(batches[i]); }) {}
  BatchPrefetch(size_t n, MakeAt make) : size_(n), make_(std::move(make)) {}
  ~BatchPrefetch();
  BatchPrefetch(const BatchPrefetch&) = delete;
  BatchPrefetch& operator=(const BatchPrefetch&) = delete;

  size_t size() const { return size_; }
  Batch take(size_t i);      // the prefetched batch when it is i, else built now
  void prefetch(size_t i);  // starts building batch i (none past the end)

 private:
  size_t size_;
  MakeAt make_;
  std::future<Batch> next_;
  size_t next_index_ = 0;
};

// What one update did.
struct StepResult {
  int64_t tokens = 0;      // source + target tokens of the global batch (all ranks)
  int64_t tgt_tokens = 0;  // target tokens of the global batch: the gradient was divided by them
  // This rank's loss and nll sums, one per micro-batch, on the device: no host sync in the step.
  std::vector<LossSums> losses;
  at::Tensor gnorm;  // the gradient norm before clipping, on the device
  double lr = 0;
  bool stop_asked = false;  // a rank was asked to stop (distributed: any rank; else this process)
  double comm_s = 0;        // seconds this rank waited for the others
  std::optional<GradientPaths> grad_paths;  // with log_grad_paths
};

class TrainStep {
 public:
  // group and sync: the other ranks, or null for one process.
  TrainStep(const Config& cfg, Transformer& model, FlatAdam& opt, const at::Device& device, ProcessGroup* group,
            GradientSync* sync);

  // One update from batch st.batch_in_epoch of the epoch: advances st's batch_in_epoch, update,
  // tokens and elapsed_s (rank 0's clock on every rank).
  StepResult update(LoopState& st, BatchPrefetch& batches, const RunClock& clock);

  // Batches of the global batch of one update: update_freq on each rank.
  size_t batches_per_update() const;
  // This rank's batches of the update that starts at batch `first` of an epoch of n.
  std::vector<size_t> my_batches(size_t first, size_t n) const;

 private:
  const Config& cfg_;
  Transformer& model_;
  FlatAdam& opt_;
  at::Device device_;
  ProcessGroup* group_;
  GradientSync* sync_;
};

}  // namespace yoke
