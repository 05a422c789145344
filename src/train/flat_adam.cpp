#include "train/flat_adam.h"

#include <cmath>

namespace yoke {

FlatAdam::FlatAdam(std::vector<at::Tensor> params, const AdamOptions& opts) : opts_(opts) {
  int64_t total = 0;
  for (auto& p : params) total += p.numel();
  auto options = params.empty() ? at::TensorOptions(at::kFloat) : params.front().options();
  params_ = at::empty({total}, options.requires_grad(false));
  grads_ = at::zeros({total}, options.requires_grad(false));
  m_ = at::zeros({total}, options.requires_grad(false));
  v_ = at::zeros({total}, options.requires_grad(false));
  int64_t offset = 0;
  for (auto& p : params) {
    const int64_t n = p.numel();
    auto data = params_.narrow(0, offset, n).view(p.sizes());
    data.copy_(p.detach());
    p.set_data(data);
    // Autograd accumulates into an existing .grad in place, so gradients land in grads_.
    p.mutable_grad() = grads_.narrow(0, offset, n).view(p.sizes());
    offset += n;
  }
}

at::Tensor FlatAdam::clip_grad_norm(double max_norm) {
  const auto norm = grads_.norm();
  if (max_norm > 0) grads_.mul_((max_norm / (norm + 1e-6)).clamp_max(1.0));  // × 1 when within the limit
  return norm;
}

void FlatAdam::step(double lr) {
  ++step_;
  m_.mul_(opts_.beta1).add_(grads_, 1.0 - opts_.beta1);
  v_.mul_(opts_.beta2).addcmul_(grads_, grads_, 1.0 - opts_.beta2);
  const double bc1 = 1.0 - std::pow(opts_.beta1, double(step_));
  const double bc2 = 1.0 - std::pow(opts_.beta2, double(step_));
  if (opts_.weight_decay > 0) params_.mul_(1.0 - lr * opts_.weight_decay);
  auto denom = (v_.sqrt() / std::sqrt(bc2)).add_(opts_.eps);
  params_.addcdiv_(m_, denom, -lr / bc1);
}

double inverse_sqrt_lr(double peak, int64_t warmup, int64_t update) {
  if (update < 1) update = 1;
  if (warmup <= 0) return peak;
  if (update <= warmup) return peak * double(update) / double(warmup);
  return peak * std::sqrt(double(warmup) / double(update));
}

}  // namespace yoke
