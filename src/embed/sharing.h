// The word representations of a model, under one sharing scheme (`tie`):
//   none      source E_s, target E_t, output U        three matrices
//   decoder   source E_s, target E_t = U              (Press & Wolf)
//   all       E_s = E_t = U                           one matrix, one joint vocabulary
//   src-tgt   E_s = E_t, separate U                   one joint vocabulary
//   shared-private  E_s, E_t assembled from shared and private blocks (Liu et al. 2019), E_t = U
// A language model (no source side) has E_t and U: `none` or `all`.
// A matrix used in several places is one parameter, so autograd sums the gradients of every use.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "config/enums.h"
#include "embed/derived_cache.h"
#include "embed/estimator.h"
#include "embed/shared_private.h"
#include "embed/word_matrix.h"

namespace yoke {

struct Config;

struct EmbeddingSpec {
  Tie tie = Tie::decoder;
  Estimator output = Estimator::dot;
  int64_t src_vocab = 0;  // 0: no source side (language model)
  int64_t tgt_vocab = 0;
  bool joint_vocab = false;
  int64_t dim = 0;
  int64_t factored_rank = 0;
  bool scale_by_sqrt_dim = true;
  double input_grad_scale = 1.0;
  int64_t pad_id = 0;
  std::shared_ptr<const SharedPrivateLayout> shared_private;  // tie = shared-private only

  // Reads tie/output/sizes from a config; checks combinations and says how to fix them.
  static EmbeddingSpec from_config(const Config&);
};

// Word-representation parameters (the Emb. column of Liu et al. 2019) and the reduction against the untied model
// with the same vocabularies (Red. = 1 − Emb./Emb.(tie none, full matrices)).
struct EmbeddingCount {
  int64_t emb = 0;
  int64_t emb_untied = 0;
  double red() const { return emb_untied ? 1.0 - double(emb) / double(emb_untied) : 0.0; }
};

// Closed form, from the spec alone (no model needed: `yoke params`). The untied baseline uses
// the spec's vocabularies unless others are given (Liu et al. 2019 compare three-way WT on a joint
// vocabulary against a vanilla model with separate ones).
EmbeddingCount count_embeddings(const EmbeddingSpec&, int64_t baseline_src_vocab = -1, int64_t baseline_tgt_vocab = -1);

// Every parameter of a model (a matrix shared between places is registered once, counted once).
int64_t count_parameters(const torch::nn::Module& model);

// Seed 004 §5.1's share of the parameters that represent words, counting 12d² per layer:
// Vd / (Vd + 12Ld²) = 1 / (1 + 12Ld/V) for a tied language model, 2Vd / (2Vd + 12Ld²) for an
// untied one. nullopt where that formula does not describe the model: not a decoder-only model,
// factored word matrices, layers shared, or shared-private embeddings.
struct Config;
std::optional<double> embedding_fraction_closed_form(const Config& cfg);

// Where the gradient of the word matrices came from in the last backward passes (Iyer et
// al. 2025): path A = every input lookup, path B = the output projection. share_output =
// ‖g_B‖² / (‖g_A‖² + ‖g_B‖²), summed over the matrices; cosine_ab = cos(g_A, g_B) on the
// matrix that serves both roles (NaN when no matrix does: tie none, src-tgt).
struct GradientPaths {
  double input_sq = 0, output_sq = 0, cosine_ab = 0;
  double share_output() const { return output_sq / std::max(1e-30, input_sq + output_sq); }
};

class WordEmbeddings : public torch::nn::Module {
 public:
  explicit WordEmbeddings(const EmbeddingSpec& spec);

  at::Tensor embed_source(const at::Tensor& ids) const;  // [B, T] → [B, T, d]
  at::Tensor embed_target(const at::Tensor& ids) const;
  at::Tensor logits(const at::Tensor& h) const;          // [N, d] → [N, V_tgt]
  LogitParts logit_parts(const at::Tensor& h) const;     // the same logits, unmultiplied (fused loss)
  AffineLogits affine_logits() const;                   // the same logits as h·Mᵀ + b (int8 decoding)

  const EmbeddingSpec& spec() const { return spec_; }
  // The three roles; the same object where tied. source() is null for a language model.
  const WordMatrix* source() const { return source_.get(); }
  const WordMatrix& target() const { return *target_; }
  const WordMatrix& output() const { return *output_; }

  // While on, every differentiable use of a matrix records the gradient that reaches it, by
  // path; take_gradient_paths() sums what was recorded since the last call and clears it.
  void track_gradient_paths(bool on) { tracking_ = on; }
  GradientPaths take_gradient_paths();

 private:
  enum Path { path_input = 0, path_output = 1 };
  at::Tensor input(const WordMatrix& m, const at::Tensor& ids) const;
  // m itself, or while tracking a view of it whose gradient is added to the path's record.
  std::shared_ptr<const WordMatrix> use(const WordMatrix& m, Path path) const;
  // The estimator's row terms of m: kept between calls while autograd is off when m is the
  // output matrix (decoding computes them once per model, not once per step).
  RowTerms row_terms_of(const WordMatrix& m) const;

  EmbeddingSpec spec_;
  std::shared_ptr<WordMatrix> source_, target_, output_;
  std::shared_ptr<SharedPrivateBlocks> blocks_;
  bool tracking_ = false;
  DerivedCache<RowTerms> output_terms_;
  // Recorded gradients per (matrix, path), summed over uses and backward passes.
  std::shared_ptr<std::map<std::pair<const WordMatrix*, int>, at::Tensor>> path_grads_ =
      std::make_shared<std::map<std::pair<const WordMatrix*, int>, at::Tensor>>();
};

}  // namespace yoke
