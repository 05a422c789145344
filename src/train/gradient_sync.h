// Gradients summed across ranks while the backward pass runs, as PyTorch's DDP does (the trainer
// then divides by the tokens of the global batch):
// the flat gradient buffer (train/flat_adam.h) is cut into buckets of about `bucket_mb`,
// ordered from its end (the last layers, whose gradients come first); a bucket's all-reduce
// starts as soon as every parameter in it has its gradient, while autograd computes the rest.
// Why not c10d's Reducer: it wants to own the gradient tensors (it makes them views of its own
// buckets), and here they already are views of the optimizer's one flat buffer; slices of that
// buffer are the buckets, with no copy in or out.
#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "compat/torch.h"
#include "train/process_group.h"

namespace torch::autograd {
struct Node;
}

namespace yoke {

class GradientSync {
 public:
  // params: the leaves whose .grad are views of flat_grads (FlatAdam's); the hooks live as long
  // as this object.
  GradientSync(ProcessGroup& group, const std::vector<at::Tensor>& params, const at::Tensor& flat_grads,
               double bucket_mb);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  // The next backward is the last one of this update (earlier micro-batches only accumulate):
  // buckets start as their gradients complete.
  void arm();
  // After that backward: starts the buckets no gradient reached (unused parameters, or a rank
  // without a batch at the end of an epoch), waits for all, and leaves the sum over the ranks in
  // flat_grads. Returns the seconds it waited: the communication the backward did not hide.
  double finish();

  size_t buckets() const { return buckets_.size(); }

 private:
  struct Bucket {
    int64_t begin = 0, end = 0;  // a slice of the flat buffer
    int params = 0;              // parameters whose gradient lands in it
    int ready = 0;               // of those, done in this backward
    std::unique_ptr<PendingCollective> pending;
  };
  void on_gradient_ready(size_t bucket);
  void start_ready_buckets();  // in bucket order, so every rank issues the same sequence

  ProcessGroup& group_;
  at::Tensor flat_;
  std::vector<Bucket> buckets_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // keep the hooks alive
  std::mutex mutex_;
  bool armed_ = false;
  size_t next_to_start_ = 0;
};

}  // namespace yoke
