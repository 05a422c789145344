#include "decode/ensemble_scorer.h"

#include "decode/row_log_softmax.h"
#include "decode/search_tensors.h"
#include "decode/shortlist.h"
#include "text/vocab.h"

namespace yoke {
namespace {

// Scores [rows, V] with pad and bos ruled out: a search never emits them.
at::Tensor without_pad_and_bos(at::Tensor scores) {
  scores.select(1, Vocab::pad).fill_(kNegInf);
  scores.select(1, Vocab::bos).fill_(kNegInf);
  return scores;
}

}  // namespace

EnsembleScorer::EnsembleScorer(const Ensemble& e, const at::Tensor& src, const SearchOptions& o)
    : ensemble_(e), on_cpu_(src.device().is_cpu()) {
  if (o.shortlist) shortlist_ = o.shortlist->targets_for(src);
  for (auto* m : e.models) {
    auto enc = m->encode(src);
    states_.push_back(m->start(&enc));
    if (shortlist_.defined()) {
      auto affine = m->embeddings->affine_logits();
      shortlisted_.push_back({affine.matrix.index_select(0, shortlist_),
                              affine.bias.defined() ? affine.bias.index_select(0, shortlist_) : at::Tensor()});
    }
  }
  states_.front().keep_attention = o.alignment;
  vocab_ = e.first().embeddings->spec().tgt_vocab;
}

at::Tensor EnsembleScorer::log_probs(const at::Tensor& tokens) {
  at::Tensor sum;
  for (size_t m = 0; m < states_.size(); ++m) {
    auto lp = log_softmax_in_place(logits(m, tokens).to(at::kFloat));  // a fresh product: in place
    // One model: its log-probabilities as they are. Weights 0.5/0.5 of one model twice give
    // exactly its own numbers (0.5·a + 0.5·a = a in floating point).
    if (ensemble_.size() > 1) lp.mul_(ensemble_.weights[m]);
    sum = sum.defined() ? sum.add_(lp) : lp;
  }
  return without_pad_and_bos(full_vocabulary(sum));
}

bool EnsembleScorer::normalizes_by_row() const {
  return ensemble_.size() == 1 && !shortlist_.defined() && on_cpu_;
}

at::Tensor EnsembleScorer::logits_to_normalize(const at::Tensor& tokens) {
  auto x = logits(0, tokens).to(at::kFloat);
  if (!x.is_contiguous() || x.size(1) != vocab_) throw std::logic_error("logits_to_normalize: fresh [rows, V] logits expected");
  return x;
}

void EnsembleScorer::normalize_row(float* row, const float* next) const {
  log_softmax_row(row, vocab_, next);  // log_probs(): log_softmax_in_place, then pad and bos ruled out
  row[Vocab::pad] = kNegInf;
  row[Vocab::bos] = kNegInf;
}

at::Tensor EnsembleScorer::argmax_scores(const at::Tensor& tokens) {
  if (ensemble_.size() > 1) return log_probs(tokens);
  return without_pad_and_bos(full_vocabulary(logits(0, tokens)));
}

void EnsembleScorer::select(const at::Tensor& index, bool same_sentences) {
  for (auto& s : states_) s.select(index, same_sentences);
}

at::Tensor EnsembleScorer::logits(size_t m, const at::Tensor& tokens) {
  auto h = ensemble_.models[m]->step(tokens, states_[m]);
  if (!shortlist_.defined()) return ensemble_.models[m]->logits(h);
  const auto& [matrix, bias] = shortlisted_[m];
  return bias.defined() ? at::linear(h, matrix, bias) : at::linear(h, matrix);
}

at::Tensor EnsembleScorer::full_vocabulary(const at::Tensor& scores) const {
  if (!shortlist_.defined()) return scores;
  auto full = at::full({scores.size(0), vocab_}, kNegInf, scores.options());
  return full.index_copy_(1, shortlist_, scores);
}

}  // namespace yoke
