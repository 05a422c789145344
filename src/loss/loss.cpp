#include "loss/loss.h"

namespace yoke {

LossSums label_smoothed_loss(const at::Tensor& logits, const at::Tensor& target, double epsilon) {
  auto lprobs = at::log_softmax(logits, -1);
  auto nll = -lprobs.gather(1, target.unsqueeze(1)).squeeze(1);
  LossSums out;
  out.tokens = target.size(0);
  out.nll = nll.sum();
  if (epsilon > 0) {
    const double eps_i = epsilon / double(logits.size(1) - 1);
    auto smooth = -lprobs.sum(-1);
    out.loss = (1.0 - epsilon - eps_i) * out.nll + eps_i * smooth.sum();
  } else {
    out.loss = out.nll;
  }
  return out;
}

SelectedPositions select_real_positions(const at::Tensor& hidden, const at::Tensor& target, int64_t pad_id) {
  return select_positions(hidden, target, target.reshape({-1}).ne(pad_id).nonzero().squeeze(1));
}

SelectedPositions select_positions(const at::Tensor& hidden, const at::Tensor& target, const at::Tensor& keep) {
  return {hidden.reshape({-1, hidden.size(-1)}).index_select(0, keep), target.reshape({-1}).index_select(0, keep)};
}

}  // namespace yoke
