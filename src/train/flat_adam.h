// Adam (Kingma & Ba 2015) over one flat buffer: all parameters and their gradients are views
// into two contiguous tensors, so a step, gradient clipping and zeroing are a handful of
// vectorised tensor operations instead of one small kernel per parameter.
#pragma once
#include <vector>

#include "compat/torch.h"

namespace yoke {

struct AdamOptions {
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-8, weight_decay = 0.0;  // decoupled (AdamW) decay
};

class FlatAdam {
 public:
  // Moves every parameter of `params` into the flat buffer (their data becomes views).
  FlatAdam(std::vector<at::Tensor> params, const AdamOptions& opts);

  void zero_grad() { grads_.zero_(); }
  // Multiplies all gradients (e.g. by 1/tokens of the accumulated batches).
  void scale_grad(double factor) { grads_.mul_(factor); }
  // Clips the global gradient norm to max_norm (no-op when max_norm <= 0); returns the norm
  // before, as a tensor on the parameters' device: nothing here waits for a GPU.
  at::Tensor clip_grad_norm(double max_norm);
  void step(double lr);

  int64_t steps() const { return step_; }
  const at::Tensor& params() const { return params_; }
  const at::Tensor& grads() const { return grads_; }
  // State for checkpoints: first and second moments, step count.
  at::Tensor& exp_avg() { return m_; }
  at::Tensor& exp_avg_sq() { return v_; }
  void set_steps(int64_t s) { step_ = s; }

 private:
  AdamOptions opts_;
  at::Tensor params_, grads_, m_, v_;
  int64_t step_ = 0;
};

// Linear warm-up to `peak` over `warmup` updates, then decay ∝ 1/√update (Vaswani et al.).
double inverse_sqrt_lr(double peak, int64_t warmup, int64_t update);

}  // namespace yoke
