// One row of the fused output loss (loss/fused_loss.h) on the CPU: log Σ e^ℓ, the target's logit
// and Σ ℓ in one read of the row, and, for training, ∂loss/∂ℓ written over the logits in the
// same call, while the row is in cache.
//
// LibTorch's ops made ~10 passes over a chunk's [512, V] logits (logsumexp, a sum, then in-place
// subtract, exp, multiply, subtract) and computed e^ℓ twice; here three passes per row, one
// exponential per logit (Cephes' expf, util/float_vectors.h), sums in one fixed order, the same
// bits in the AVX-512, AVX2 and baseline clones.
#pragma once
#include <cstdint>

namespace yoke {

struct SmoothedLossRow {
  float log_sum_exp;   // log Σ_v e^ℓ_v
  float target_logit;  // ℓ_target
  float logit_sum;     // Σ_v ℓ_v (the label-smoothing term's)
};

// ℓ: n logits (overwritten: by e^(ℓ − max) without `gradient`, by the gradient with it);
// `gradient`: ∂loss/∂ℓ_v = (a + b·n)·p_v − b − a·[v = target] with loss.h's a, b.
SmoothedLossRow smoothed_loss_row(float* logits, int64_t n, int64_t target, float a, float b, bool gradient);

}  // namespace yoke
