// A V×d word matrix, stored whole or factored as A·B (ALBERT: A ∈ R^{V×k}, B ∈ R^{k×d}).
// Every consumer goes through lookup / project / row_norms, so a factored matrix never has to
// be materialised: lookup = A[ids]·B and project(h) = A·(B·h).
#pragma once
#include "compat/torch.h"

namespace yoke {

class WordMatrix : public torch::nn::Module {
 public:
  WordMatrix(int64_t vocab, int64_t dim, int64_t rank, int64_t pad_id);

  at::Tensor lookup(const at::Tensor& ids) const;   // [...] → [..., d]
  at::Tensor project(const at::Tensor& h) const;    // [N, d] → [N, V]: h·Wᵀ
  at::Tensor row_norms() const;                     // [V]: ‖w_i‖, differentiable
  at::Tensor full() const;                          // [V, d], materialised (analysis, tests)

  int64_t vocab() const { return vocab_; }
  int64_t dim() const { return dim_; }
  int64_t rank() const { return rank_; }
  int64_t parameter_count() const { return rank_ > 0 ? rank_ * (vocab_ + dim_) : vocab_ * dim_; }

  at::Tensor weight, factor_a, factor_b;  // weight when rank == 0, else factor_a·factor_b

 private:
  int64_t vocab_, dim_, rank_;
};

}  // namespace yoke
