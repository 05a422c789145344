#include "train/train_step.h"

#include <algorithm>
#include <chrono>

#include "loss/batch_loss.h"
#include "model/transformer.h"
#include "train/collectives.h"
#include "train/flat_adam.h"
#include "train/gradient_sync.h"
#include "train/stop_signal.h"

namespace yoke {

LossSums forward_loss(Transformer& model, const Batch& b, const at::Device& device, const Config& cfg) {
  compat::Autocast autocast(device, cfg.amp);  // backward runs outside it, as autocast wants
  return batch_loss(model, b, cfg.label_smoothing, cfg.bridging_weight);
}

BatchPrefetch::~BatchPrefetch() {
  if (next_.valid()) next_.wait();
}

Batch BatchPrefetch::take(size_t i) { return next_.valid() && next_index_ == i ? next_.get() : make_(i); }

void BatchPrefetch::prefetch(size_t i) {
  if (i >= size_) return;
  next_index_ = i;
  next_ = std::async(std::launch::async, [this, i] { return make_(i); });
}

TrainStep::TrainStep(const Config& cfg, Transformer& model, FlatAdam& opt, const at::Device& device,
                     ProcessGroup* group, GradientSync* sync)
    : cfg_(cfg), model_(model), opt_(opt), device_(device), group_(group), sync_(sync) {}

size_t TrainStep::batches_per_update() const {
  return size_t(cfg_.update_freq) * size_t(group_ ? group_->size() : 1);
}

std::vector<size_t> TrainStep::my_batches(size_t first, size_t n) const {
  // An update takes update_freq batches on each rank: with N ranks, the same global batches, in
  // the same order, as one process with update_freq × N takes. The j-th of the global batch is
  // the one at first + j, and rank r takes j = r·update_freq … (r+1)·update_freq − 1.
  const int rank = group_ ? group_->rank() : 0;
  std::vector<size_t> mine;
  for (int k = 0; k < cfg_.update_freq; ++k)
    if (const size_t i = first + size_t(rank * cfg_.update_freq + k); i < n) mine.push_back(i);
  return mine;
}

StepResult TrainStep::update(LoopState& st, BatchPrefetch& batches, const RunClock& clock) {
  const int rank = group_ ? group_->rank() : 0;
  const size_t first = st.batch_in_epoch;
  const std::vector<size_t> mine = my_batches(first, batches.size());
  st.batch_in_epoch = std::min(first + batches_per_update(), batches.size());
  StepResult r;
  opt_.zero_grad();
  UpdateCounts counts;
  for (size_t k = 0; k < mine.size(); ++k) {
    // Dropout noise is a function of (seed, update, place in the global batch): a resumed run
    // draws the same masks, and so does a run on another number of ranks.
    const uint64_t j = uint64_t(rank * cfg_.update_freq) + k;
    at::manual_seed(uint64_t(cfg_.seed) * 7919ull + uint64_t(st.update) + 1 + j * 1000003ull);
    auto b = batches.take(mine[k]);
    // The next batch (this rank's first of the next update after the last) is built while this one trains.
    batches.prefetch(k + 1 < mine.size() ? mine[k + 1] : first + batches_per_update() + size_t(rank * cfg_.update_freq));
    if (sync_ && k + 1 == mine.size()) sync_->arm();  // the last backward: start all-reduces as it goes
    auto out = forward_loss(model_, b, device_, cfg_);
    out.loss.backward();
    r.losses.push_back({out.loss.detach(), out.nll.detach(), out.tokens,
                        out.bridge.defined() ? out.bridge.detach() : at::Tensor()});
    counts.tgt_tokens += out.tokens;
    counts.tokens += b.src_tokens + b.tgt_tokens;
  }
  if (cfg_.log_grad_paths) r.grad_paths = model_.embeddings->take_gradient_paths();
  counts.stop_asked = stop_requested();
  if (group_) {
    const auto c0 = std::chrono::steady_clock::now();
    sync_->finish();
    counts.elapsed_s = group_->rank() == 0 ? clock.now() : 0.0;
    counts = share_update_counts(group_, counts);
    st.elapsed_s = counts.elapsed_s;
    r.comm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  }
  st.tokens += counts.tokens;
  opt_.scale_grad(1.0 / double(std::max<int64_t>(1, counts.tgt_tokens)));  // per-token gradient
  r.gnorm = opt_.clip_grad_norm(cfg_.clip_norm);
  r.lr = inverse_sqrt_lr(cfg_.lr, cfg_.warmup, st.update + 1);
  opt_.step(r.lr);
  ++st.update;
  if (!group_) st.elapsed_s = clock.now();
  r.tokens = counts.tokens;
  r.tgt_tokens = counts.tgt_tokens;
  r.stop_asked = counts.stop_asked;
  return r;
}

}  // namespace yoke
