// Direct bridging (Kuang et al. 2018, "Attention Focusing for Neural Machine Translation by
// Bridging Source and Target Embeddings"): an auxiliary loss that pulls each target word's
// embedding y_t toward a learned linear map W of the embedding x_{t*} of the source word aligned
// to it,
//     ℓ_bridge = Σ_t ‖W·x_{t*} − y_t‖²,   total loss = ℓ_CE + bridging_weight · ℓ_bridge.
// docs/bridging.md says which choices follow the paper (as seed 003 describes it and as we read
// it) and which are yoke's. The paper's: the squared Euclidean distance, one d×d matrix W without bias, the aligned source
// word = the one the decoder's attention weighs most at step t, the gradient reaching W and both
// embedding matrices, weight 1. yoke's: the attention is the cross-attention averaged over
// decoder layers and heads (the paper's RNNsearch has one), W starts Glorot-uniform, x and y are
// the matrices' raw rows (before √d scaling), and the sum runs over the real target tokens of a
// batch, so that dividing by the tokens, as the trainer does, makes it a per-token mean.
#pragma once
#include "compat/torch.h"

namespace yoke {

class DirectBridge : public torch::nn::Module {
 public:
  explicit DirectBridge(int64_t dim);

  // x_src, y_tgt [N, d]: the rows of aligned (source, target) words. Returns Σ_n ‖W·x_n − y_n‖².
  at::Tensor loss_sum(const at::Tensor& x_src, const at::Tensor& y_tgt) const;

  at::Tensor weight;  // W [d, d]: W·x = x·Wᵀ
};

// The aligned source position of every target position: the argmax over source positions of
// attention [B, T, S] (padding has probability 0, so it is never chosen over a real token).
at::Tensor most_attended_source(const at::Tensor& attention);

}  // namespace yoke
