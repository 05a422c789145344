// A V×d word matrix, stored whole or factored as A·B (ALBERT: A ∈ R^{V×k}, B ∈ R^{k×d}).
// Every consumer goes through lookup / project / row_norms, so a factored matrix never has to
// be materialised: lookup = A[ids]·B and project(h) = A·(B·h).
#pragma once
#include <utility>
#include <vector>

#include "compat/torch.h"

namespace yoke {

class WordMatrix : public torch::nn::Module {
 public:
  WordMatrix(int64_t vocab, int64_t dim, int64_t rank, int64_t pad_id);
  virtual ~WordMatrix() = default;

  virtual at::Tensor lookup(const at::Tensor& ids) const;   // [...] → [..., d]
  virtual at::Tensor project(const at::Tensor& h) const;    // [N, d] → [N, V]: h·Wᵀ
  virtual at::Tensor row_norms() const;                     // [V]: ‖w_i‖, differentiable
  virtual at::Tensor full() const;                          // [V, d], materialised, read only (analysis, tests)
  // (h', M) with project(h) = h'·Mᵀ and M as small as the storage allows: (h, W), or for a
  // factored matrix (h·Bᵀ, A). The fused output loss multiplies these itself.
  virtual std::pair<at::Tensor, at::Tensor> projection_operands(const at::Tensor& h) const;
  // The tensors this matrix's values are computed from: what a value derived from it and kept
  // between decoding steps (embed/derived_cache.h) must watch for changes.
  virtual std::vector<at::Tensor> derived_from() const;

  int64_t vocab() const { return vocab_; }
  int64_t dim() const { return dim_; }
  int64_t rank() const { return rank_; }
  at::Tensor weight, factor_a, factor_b;  // weight when rank == 0, else factor_a·factor_b

 protected:
  // For matrices assembled from other parameters (shared-private): no storage of its own.
  WordMatrix(int64_t vocab, int64_t dim) : vocab_(vocab), dim_(dim), rank_(0) {}

  int64_t vocab_, dim_, rank_;
};

// A WordMatrix view of a given [V, d] tensor, e.g. one use of a shared matrix that gradient
// hooks can tell apart from its other uses.
class TensorMatrix : public WordMatrix {
 public:
  explicit TensorMatrix(at::Tensor w) : WordMatrix(w.size(0), w.size(1)), w_(std::move(w)) {}
  at::Tensor lookup(const at::Tensor& ids) const override { return at::embedding(w_, ids); }
  at::Tensor project(const at::Tensor& h) const override { return at::matmul(h, w_.t()); }
  at::Tensor row_norms() const override { return w_.norm(2, {1}); }
  at::Tensor full() const override { return w_; }
  std::pair<at::Tensor, at::Tensor> projection_operands(const at::Tensor& h) const override { return {h, w_}; }
  std::vector<at::Tensor> derived_from() const override { return {w_}; }

 private:
  at::Tensor w_;
};

}  // namespace yoke
