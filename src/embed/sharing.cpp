#include "embed/sharing.h"

#include <cmath>

#include "config/config.h"
#include "util/error.h"

namespace yoke {

EmbeddingSpec EmbeddingSpec::from_config(const Config& c) {
  EmbeddingSpec s;
  s.tie = c.tie;
  s.output = c.output;
  s.src_vocab = c.task == Task::lm ? 0 : c.src_vocab_size;
  s.tgt_vocab = c.tgt_vocab_size;
  s.joint_vocab = c.joint_vocab;
  s.dim = c.d_model;
  s.factored_rank = c.factored_rank;
  s.scale_by_sqrt_dim = c.embed_scale == EmbedScale::sqrt;
  s.input_grad_scale = c.input_grad_scale;
  if (s.tgt_vocab <= 0 || (c.task != Task::lm && s.src_vocab <= 0))
    throw InputError("vocabulary sizes unknown: give `data = DIR` (from `yoke prepare`) or set "
                     "src_vocab_size and tgt_vocab_size");
  const bool sharing_across_languages = s.tie == Tie::all || s.tie == Tie::src_tgt;
  if (c.task == Task::lm) {
    // A language model has one vocabulary: tying its input and output (decoder) is tying all.
    if (s.tie == Tie::decoder) s.tie = Tie::all;
    if (s.tie != Tie::none && s.tie != Tie::all)
      throw InputError("tie = '" + std::string(name_of(c.tie)) + "' has no meaning for a language model: use none or all");
  } else if (sharing_across_languages && (!s.joint_vocab || s.src_vocab != s.tgt_vocab)) {
    throw InputError("tie = " + std::string(name_of(c.tie)) + " shares one matrix between source and target, which needs one "
                     "joint vocabulary (here: " + std::to_string(s.src_vocab) + " source and " +
                     std::to_string(s.tgt_vocab) + " target entries" + (s.joint_vocab ? "" : ", separate") +
                     "). Prepare the data with `yoke prepare --joint` (one SentencePiece model for both "
                     "languages), or use tie = decoder or none");
  }
  if (s.tie == Tie::shared_private) {
    if (c.task == Task::lm) throw InputError("tie = shared-private needs a source language: not for task = lm");
    if (c.factored_rank > 0) throw InputError("tie = shared-private does not combine with factored_rank");
    if (c.pairs.empty())
      throw InputError("tie = shared-private needs `pairs = FILE`, the word pairs from `yoke pair --data DIR --out FILE`");
  }
  if (s.factored_rank >= s.dim)
    throw InputError("factored_rank (" + std::to_string(s.factored_rank) + ") must be smaller than d_model (" +
                     std::to_string(s.dim) + ") to save parameters");
  return s;
}

EmbeddingCount count_embeddings(const EmbeddingSpec& s, int64_t baseline_src_vocab, int64_t baseline_tgt_vocab) {
  auto matrix = [&](int64_t v) { return s.factored_rank > 0 ? s.factored_rank * (v + s.dim) : v * s.dim; };
  EmbeddingCount c;
  const int64_t vs = s.src_vocab, vt = s.tgt_vocab, d = s.dim;
  c.emb_untied = (baseline_src_vocab >= 0 ? baseline_src_vocab : vs) * d +
                 2 * (baseline_tgt_vocab >= 0 ? baseline_tgt_vocab : vt) * d;
  switch (s.tie) {
    case Tie::none: c.emb = (vs ? matrix(vs) : 0) + 2 * matrix(vt); break;
    case Tie::decoder: c.emb = (vs ? matrix(vs) : 0) + matrix(vt); break;
    case Tie::all: c.emb = matrix(vt); break;
    case Tie::src_tgt: c.emb = 2 * matrix(vt); break;
    case Tie::shared_private:
      if (!s.shared_private) throw InputError("shared-private accounting needs the word pairs (pairs = FILE)");
      c.emb = s.shared_private->parameter_count();
      break;
  }
  return c;
}

WordEmbeddings::WordEmbeddings(const EmbeddingSpec& spec) : spec_(spec) {
  auto make = [&](const char* name, int64_t vocab) {
    return register_module(name, std::make_shared<WordMatrix>(vocab, spec.dim, spec.factored_rank, spec.pad_id));
  };
  const bool lm = spec.src_vocab == 0;
  switch (spec.tie) {
    case Tie::none:
      if (!lm) source_ = make("source", spec.src_vocab);
      target_ = make("target", spec.tgt_vocab);
      output_ = make("output", spec.tgt_vocab);
      break;
    case Tie::decoder:
      if (!lm) source_ = make("source", spec.src_vocab);
      target_ = output_ = make("target", spec.tgt_vocab);
      break;
    case Tie::all:
      target_ = output_ = make("shared", spec.tgt_vocab);
      if (!lm) source_ = target_;
      break;
    case Tie::src_tgt:
      target_ = make("shared", spec.tgt_vocab);
      source_ = target_;
      output_ = make("output", spec.tgt_vocab);
      break;
    case Tie::shared_private:
      if (!spec.shared_private) throw InputError("tie = shared-private: no word pairs loaded");
      blocks_ = register_module("shared_private", std::make_shared<SharedPrivateBlocks>(*spec.shared_private, spec.pad_id));
      source_ = std::make_shared<AssembledMatrix>(blocks_, true);
      target_ = output_ = std::make_shared<AssembledMatrix>(blocks_, false);
      break;
  }
}

std::shared_ptr<const WordMatrix> WordEmbeddings::use(const WordMatrix& m, Path path) const {
  if (!tracking_ || !at::GradMode::is_enabled()) return std::shared_ptr<const WordMatrix>(std::shared_ptr<void>(), &m);
  auto full = m.full();
  auto view = full.view(full.sizes());
  auto record = path_grads_;
  const auto key = std::make_pair(&m, int(path));
  view.register_hook([record, key](const at::Tensor& g) {
    auto& sum = (*record)[key];
    sum = sum.defined() ? sum + g.detach() : g.detach().clone();
  });
  return std::make_shared<TensorMatrix>(view);
}

GradientPaths WordEmbeddings::take_gradient_paths() {
  GradientPaths out;
  out.cosine_ab = std::nan("");
  at::NoGradGuard no_grad;
  for (const auto& [key, g] : *path_grads_) {
    const double sq = g.to(at::kDouble).pow(2).sum().item<double>();
    (key.second == path_input ? out.input_sq : out.output_sq) += sq;
    if (key.second != path_output) continue;
    auto other = path_grads_->find({key.first, path_input});
    if (other != path_grads_->end())
      out.cosine_ab = at::cosine_similarity(g.reshape(-1).to(at::kDouble), other->second.reshape(-1).to(at::kDouble), 0)
                          .item<double>();
  }
  path_grads_->clear();
  return out;
}

at::Tensor WordEmbeddings::input(const WordMatrix& matrix, const at::Tensor& ids) const {
  const auto m_use = use(matrix, path_input);
  const WordMatrix& m = *m_use;
  auto x = estimator_lookup(spec_.output, m, ids);
  if (spec_.input_grad_scale != 1.0) {
    // Forward value x, backward α·∂L/∂x: only path A (the lookup) is scaled.
    const double a = spec_.input_grad_scale;
    x = x * a + x.detach() * (1.0 - a);
  }
  if (spec_.scale_by_sqrt_dim) x = x * std::sqrt(double(spec_.dim));
  return x;
}

at::Tensor WordEmbeddings::embed_source(const at::Tensor& ids) const { return input(*source_, ids); }
at::Tensor WordEmbeddings::embed_target(const at::Tensor& ids) const { return input(*target_, ids); }

RowTerms WordEmbeddings::row_terms_of(const WordMatrix& m) const {
  // A tracking view (autograd on) is not the output matrix: its terms carry the recorded gradient.
  if (spec_.output == Estimator::dot || &m != output_.get()) return row_terms(spec_.output, m);
  return output_terms_.get(m.derived_from(), [&] { return row_terms(spec_.output, m); });
}

LogitParts WordEmbeddings::logit_parts(const at::Tensor& h) const {
  const auto m = use(*output_, path_output);
  return yoke::logit_parts(spec_.output, *m, h, row_terms_of(*m));
}
AffineLogits WordEmbeddings::affine_logits() const {
  return yoke::affine_logits(spec_.output, *output_, row_terms_of(*output_));
}
at::Tensor WordEmbeddings::logits(const at::Tensor& h) const {
  const auto m = use(*output_, path_output);
  return estimate_logits(spec_.output, *m, h, row_terms_of(*m));
}

int64_t count_parameters(const torch::nn::Module& model) {
  int64_t n = 0;
  for (const auto& p : model.parameters(/*recurse=*/true)) n += p.numel();
  return n;
}

std::optional<double> embedding_fraction_closed_form(const Config& cfg) {
  if (cfg.task != Task::lm || cfg.factored_rank > 0 || cfg.cross_layer || cfg.tie == Tie::shared_private)
    return std::nullopt;
  const double v = double(cfg.tgt_vocab_size), d = double(cfg.d_model), layers = double(cfg.decoder_layers);
  const double words = (cfg.tie == Tie::none ? 2.0 : 1.0) * v * d;
  return words / (words + 12.0 * layers * d * d);
}

}  // namespace yoke
