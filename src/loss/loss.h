// Label-smoothed cross-entropy (Szegedy et al. 2016, as fairseq computes it), over the real
// target positions only: padding never reaches the output layer.
#pragma once
#include "compat/torch.h"

namespace yoke {

struct LossSums {
  at::Tensor loss;  // summed over tokens (the training objective)
  at::Tensor nll;   // summed negative log-likelihood (for perplexity)
  int64_t tokens = 0;
  at::Tensor bridge;  // bridging = direct: Σ ‖W·x − y‖² over the tokens (in `loss` times its weight); else undefined
};

// logits [N, V], target [N]: loss = (1−ε−ε')·nll + ε'·Σ_v −log p_v with ε' = ε/(V−1).
LossSums label_smoothed_loss(const at::Tensor& logits, const at::Tensor& target, double epsilon);

// Decoder hidden states at the non-padding positions ([N, d]) and their targets ([N]).
struct SelectedPositions {
  at::Tensor hidden, target;
};
SelectedPositions select_real_positions(const at::Tensor& hidden, const at::Tensor& target, int64_t pad_id);
// The same with the flat indices of those positions already known (Batch::keep).
SelectedPositions select_positions(const at::Tensor& hidden, const at::Tensor& target, const at::Tensor& keep);

}  // namespace yoke
