// Logit estimators on an output matrix U with rows w_i (Liu, Zhai & Chen 2020, §2.2):
//   dot       ℓ_i = w_i·h                      (baseline)
//   l2        ℓ_i = (w_i/‖w_i‖)·h              input lookups use w_i/‖w_i‖ too
//   square    ℓ_i = w_i·h / ‖w_i‖²
//   distance  ℓ_i = w_i·h − ½‖w_i‖²
//   cosine    ℓ_i = w_i·h / ‖w_i‖
// Norms are taken from the live weights on every call, so they carry gradient. (WordEmbeddings
// computes them once and keeps them while autograd is off: see RowTerms.)
#pragma once
#include "config/enums.h"
#include "embed/word_matrix.h"

namespace yoke {

// Guards the norm of an all-zero row (the padding row): its logit stays finite.
constexpr double kNormFloor = 1e-6;

// What an estimator takes from the weights alone, one value per row (undefined where it has none):
//   dot: –   l2/cosine: divisor = max(‖w‖, floor)   square: divisor = max(‖w‖², floor²)
//   distance: half_square = ½‖w‖²
// The same for every step of a decoder, which therefore computes them once per model
// (WordEmbeddings keeps them, embed/derived_cache.h). Every function below that takes RowTerms
// gives bit for bit what it gives when it computes them itself.
struct RowTerms {
  at::Tensor divisor, half_square;
};
RowTerms row_terms(Estimator, const WordMatrix& output);

// ℓ = estimator(U, h): h [N, d] → [N, V].
at::Tensor estimate_logits(Estimator, const WordMatrix& output, const at::Tensor& h);
at::Tensor estimate_logits(Estimator, const WordMatrix& output, const at::Tensor& h, const RowTerms&);

// Every estimator has the form ℓ = (h'·Mᵀ)·s + c, with (h', M) from the matrix's
// projection_operands and per-row s and c (undefined where the estimator has none):
//   dot: –, –   l2/cosine: s = 1/‖w‖   square: s = 1/‖w‖²   distance: c = −½‖w‖²
// The fused output loss works on these parts so that it never builds the whole [N, V] logits.
struct LogitParts {
  at::Tensor h, matrix, scale, bias;
};
LogitParts logit_parts(Estimator, const WordMatrix& output, const at::Tensor& h);
LogitParts logit_parts(Estimator, const WordMatrix& output, const at::Tensor& h, const RowTerms&);

// The same logits as one affine map of h, ℓ = h·Mᵀ + b, with the estimator's per-row scale
// folded into the rows of the materialised matrix (M = diag(s)·W; a factored W is multiplied
// out) and its bias kept apart (b = c, undefined where there is none). Decoding with an int8 M
// (model/int8_linear.h) quantizes these effective rows, one scale per row, so every estimator
// keeps its maths: the per-row scale of l2, cosine and square commutes with a per-row
// quantization, and distance's −½‖w‖² stays an fp32 bias.
struct AffineLogits {
  at::Tensor matrix, bias;
};
AffineLogits affine_logits(Estimator, const WordMatrix& output);
AffineLogits affine_logits(Estimator, const WordMatrix& output, const RowTerms&);

// The rows an input lookup reads: w_i, or w_i/‖w_i‖ under l2.
at::Tensor estimator_lookup(Estimator, const WordMatrix& matrix, const at::Tensor& ids);

}  // namespace yoke
