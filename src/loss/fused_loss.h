// The output layer and label-smoothed cross-entropy in one pass over row chunks: the [N, V]
// logits exist one chunk at a time and are never kept for backward. While the chunk's softmax
// is at hand its gradient is formed too (the loss is a sum, so ∂loss/∂ℓ is known per row), and
// the gradients of h', M, s and c are accumulated; backward then only scales them by the
// incoming gradient. Equal to label_smoothed_loss(estimate_logits(...)) — a test holds it so.
#pragma once
#include "embed/estimator.h"
#include "loss/loss.h"

namespace yoke {

// parts: the estimator's ℓ = (h'·Mᵀ)·s + c (WordEmbeddings::logit_parts); target [N].
// Gradients are formed only when grad mode is on and some part requires them. chunk_rows 0
// picks the size for the device: 512 rows on a CPU, which keeps a chunk in cache; on a GPU,
// few large products (up to 2^27 logits a chunk, never fewer than 512 rows).
LossSums fused_output_loss(const LogitParts& parts, const at::Tensor& target, double epsilon, int64_t chunk_rows = 0);

}  // namespace yoke
