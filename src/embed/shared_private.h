// Shared-private bilingual embeddings (Liu et al. 2019, §2.2, eq. 2–3). Each source word x paired with
// a target word y in category c ∈ {lm, wf, ur} shares the first λ_c·d columns of its row with
// y; the other columns are private to each word. Unpaired words are wholly private. Before every
// lookup the two matrices are assembled from the blocks (under autograd on every use; without it
// once, kept until a block changes: embed/derived_cache.h):
//   E_x = [S_lm ⊕̃ P^x_lm ; S_wf ⊕̃ P^x_wf ; S_ur ⊕̃ P^x_ur ; P^x_unpaired]   (rows then permuted
//   E_y = [S_lm ⊕̃ P^y_lm ; S_wf ⊕̃ P^y_wf ; S_ur ⊕̃ P^y_ur ; P^y_unpaired]    into vocabulary order)
// S_c is one parameter used by both, so its gradient is the sum of both words' gradients.
#pragma once
#include <array>
#include <utility>
#include <vector>

#include "embed/derived_cache.h"
#include "embed/word_matrix.h"

namespace yoke {

struct SharedPrivateLayout {
  int64_t src_vocab = 0, tgt_vocab = 0, dim = 0;
  std::array<std::vector<std::pair<int, int>>, 3> pairs;  // (src_id, tgt_id) per category lm, wf, ur
  std::array<double, 3> lambda{0.9, 0.7, 0.5};

  int64_t shared_columns(int category) const;  // round(λ_c · d)
  // Σ_c n_c (s_c + 2 (d − s_c)) + (unpaired source + unpaired target) · d
  int64_t parameter_count() const;
  // Checks ids in range and one-to-one; throws InputError.
  void validate() const;
};

// The parameters of both matrices; source() and target() assemble them. Without autograd
// (decoding) each side is assembled once and kept until one of its blocks changes.
class SharedPrivateBlocks : public torch::nn::Module {
 public:
  SharedPrivateBlocks(const SharedPrivateLayout& layout, int64_t pad_id);
  at::Tensor source() const;  // [V_src, d]
  at::Tensor target() const;  // [V_tgt, d]
  // The tensors one side is assembled from: its blocks and its row order.
  std::vector<at::Tensor> side_tensors(bool source_side) const;
  const SharedPrivateLayout& layout() const { return layout_; }

 private:
  at::Tensor assemble(bool source_side) const;
  at::Tensor assembled(bool source_side) const;  // assemble(), kept while autograd is off
  SharedPrivateLayout layout_;
  std::array<at::Tensor, 3> shared_, src_private_, tgt_private_;
  at::Tensor src_unpaired_, tgt_unpaired_;
  at::Tensor src_order_, tgt_order_;  // vocabulary id → row of the stacked blocks
  DerivedCache<at::Tensor> kept_[2];    // target, source
};

// One side of the shared-private pair seen as a WordMatrix, so lookups, every logit estimator
// and the analyses work on it unchanged.
class AssembledMatrix : public WordMatrix {
 public:
  AssembledMatrix(std::shared_ptr<SharedPrivateBlocks> blocks, bool source_side);
  at::Tensor lookup(const at::Tensor& ids) const override { return at::embedding(full(), ids); }
  at::Tensor project(const at::Tensor& h) const override { return at::matmul(h, full().t()); }
  at::Tensor row_norms() const override { return full().norm(2, {1}); }
  at::Tensor full() const override { return source_side_ ? blocks_->source() : blocks_->target(); }
  std::pair<at::Tensor, at::Tensor> projection_operands(const at::Tensor& h) const override { return {h, full()}; }
  std::vector<at::Tensor> derived_from() const override { return blocks_->side_tensors(source_side_); }

 private:
  std::shared_ptr<SharedPrivateBlocks> blocks_;
  bool source_side_;
};

}  // namespace yoke
