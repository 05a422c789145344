#include "train/gradient_sync.h"

#include <algorithm>
#include <unordered_map>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/variable.h>

#include "util/error.h"

namespace yoke {
namespace {

// Runs after autograd has added a parameter's gradient into its .grad: that slice is final.
struct GradientReadyHook final : torch::autograd::FunctionPostHook {
  explicit GradientReadyHook(std::function<void()> ready) : ready_(std::move(ready)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& grad_inputs,
                                            const torch::autograd::variable_list& /*grad_outputs*/) override {
    ready_();
    return grad_inputs;
  }
  std::function<void()> ready_;
};

}  // namespace

GradientSync::GradientSync(ProcessGroup& group, const std::vector<at::Tensor>& params, const at::Tensor& flat_grads,
                           double bucket_mb)
    : group_(group), flat_(flat_grads) {
  // Each parameter once (a tied matrix may be listed twice), with its slice of the buffer.
  struct Slice {
    int64_t offset, numel;
    at::Tensor param;
  };
  std::vector<Slice> slices;
  std::unordered_map<const void*, bool> seen;
  for (const auto& p : params) {
    if (!seen.emplace(p.unsafeGetTensorImpl(), true).second) continue;
    const auto& g = p.grad();
    if (!g.defined() || !g.is_alias_of(flat_))
      throw std::logic_error("GradientSync: a parameter's gradient is not a view of the flat gradient buffer");
    slices.push_back({g.storage_offset() - flat_.storage_offset(), g.numel(), p});
  }
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.offset > b.offset; });
  const int64_t cap = std::max<int64_t>(1, int64_t(bucket_mb * 1024 * 1024 / double(flat_.element_size())));
  std::vector<size_t> bucket_of(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    if (buckets_.empty() || buckets_.back().end - buckets_.back().begin >= cap) {
      Bucket b;
      b.end = buckets_.empty() ? flat_.numel() : buckets_.back().begin;
      b.begin = b.end;
      buckets_.push_back(std::move(b));
    }
    buckets_.back().begin = slices[i].offset;
    ++buckets_.back().params;
    bucket_of[i] = buckets_.size() - 1;
  }
  if (!buckets_.empty()) buckets_.back().begin = 0;  // the buckets tile the whole buffer
  for (size_t i = 0; i < slices.size(); ++i) {
    auto acc = torch::autograd::impl::grad_accumulator(slices[i].param);
    if (!acc) throw std::logic_error("GradientSync: a parameter has no gradient accumulator (not a leaf?)");
    const size_t b = bucket_of[i];
    acc->add_post_hook(std::make_unique<GradientReadyHook>([this, b] { on_gradient_ready(b); }));
    accumulators_.push_back(std::move(acc));
  }
}

GradientSync::~GradientSync() {
  // Collectives still in flight read the buffer: let them end before it may go.
  for (auto& b : buckets_)
    if (b.pending) try { b.pending->wait(); } catch (...) {}
}

void GradientSync::arm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = true;
}

void GradientSync::on_gradient_ready(size_t bucket) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!armed_) return;
  ++buckets_[bucket].ready;
  start_ready_buckets();
}

void GradientSync::start_ready_buckets() {
  while (next_to_start_ < buckets_.size() && buckets_[next_to_start_].ready >= buckets_[next_to_start_].params) {
    auto& b = buckets_[next_to_start_++];
    b.pending = group_.start_allreduce_sum(flat_.slice(0, b.begin, b.end));
  }
}

double GradientSync::finish() {
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& b : buckets_) b.ready = b.params;  // what no gradient reached is final too (zeros)
    start_ready_buckets();
    armed_ = false;
  }
  for (auto& b : buckets_) {
    b.pending->wait();
    b.pending.reset();
    b.ready = 0;
  }
  next_to_start_ = 0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace yoke
