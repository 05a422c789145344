#include "embed/word_matrix.h"

#include <cmath>

#include "embed/initial_values.h"

namespace yoke {

WordMatrix::WordMatrix(int64_t vocab, int64_t dim, int64_t rank, int64_t pad_id)
    : vocab_(vocab), dim_(dim), rank_(rank) {
  // N(0, d^-1/2) rows (Vaswani et al.; fairseq); the padding row starts at zero.
  if (rank_ == 0) {
    weight = register_parameter("weight", initial_normal({vocab, dim}, std::pow(double(dim), -0.5)));
    if (pad_id >= 0 && pad_id < vocab) weight.detach()[pad_id].zero_();
  } else {
    // Scaled so that rows of A·B have the same expected norm as a full matrix's rows.
    factor_a = register_parameter("factor_a", initial_normal({vocab, rank}, std::pow(double(rank), -0.5)));
    factor_b = register_parameter("factor_b", initial_normal({rank, dim}, std::pow(double(dim), -0.5)));
    if (pad_id >= 0 && pad_id < vocab) factor_a.detach()[pad_id].zero_();
  }
}

at::Tensor WordMatrix::lookup(const at::Tensor& ids) const {
  if (rank_ == 0) return at::embedding(weight, ids);
  return at::matmul(at::embedding(factor_a, ids), factor_b);
}

at::Tensor WordMatrix::project(const at::Tensor& h) const {
  if (rank_ == 0) return at::matmul(h, weight.t());
  return at::matmul(at::matmul(h, factor_b.t()), factor_a.t());
}

at::Tensor WordMatrix::row_norms() const {
  if (rank_ == 0) return weight.norm(2, {1});
  // ‖a_i B‖² = a_i (B Bᵀ) a_iᵀ: V·k² work instead of V·k·d.
  auto gram = at::matmul(factor_b, factor_b.t());
  // The floor keeps sqrt's backward finite on zero rows (padding): clamp_min passes no
  // gradient there, and 0·∞ would otherwise be NaN.
  return (at::matmul(factor_a, gram) * factor_a).sum(1).clamp_min(1e-24).sqrt();
}

std::pair<at::Tensor, at::Tensor> WordMatrix::projection_operands(const at::Tensor& h) const {
  if (rank_ == 0) return {h, weight};
  return {at::matmul(h, factor_b.t()), factor_a};
}

std::vector<at::Tensor> WordMatrix::derived_from() const {
  if (rank_ == 0) return {weight};
  return {factor_a, factor_b};
}

at::Tensor WordMatrix::full() const { return rank_ == 0 ? weight : at::matmul(factor_a, factor_b); }

}  // namespace yoke
