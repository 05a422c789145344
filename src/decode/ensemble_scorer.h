// The models of an ensemble scoring the same rows in step (decode/search.h's Ensemble): each its
// own encoder output and incremental state, one combined score per step. Under a shortlist
// (decode/shortlist.h) the output layer covers only the batch's subset of the target vocabulary:
// what the search's loop calls before it scores.
#pragma once
#include <utility>
#include <vector>

#include "decode/search.h"

namespace yoke {

class EnsembleScorer {
 public:
  // One row per source row; a beam's select() gives each hypothesis its row (the memory's keys and
  // values stay one per sentence: on the CPU the rows are read by index, KeyValues::keep_rows).
  EnsembleScorer(const Ensemble& e, const at::Tensor& src, const SearchOptions& o);

  // The weighted mean of the models' log-probabilities of the next token [rows, V]; pad and bos
  // (and, under a shortlist, every id outside it) are -inf.
  at::Tensor log_probs(const at::Tensor& tokens);

  // A single model without a shortlist, on the CPU: its log-probabilities may be made a row at a
  // time from its logits (normalize_row), each while it is in cache.
  bool normalizes_by_row() const;
  // That model's logits [rows, V], fresh (normalize_row may write into them).
  at::Tensor logits_to_normalize(const at::Tensor& tokens);
  // What log_probs() gives for one row of logits_to_normalize()'s, in place (`next`, the row
  // normalized after it, is fetched meanwhile; null: none).
  void normalize_row(float* row, const float* next) const;

  // What greedy search takes the argmax of: a single model's logits (the softmax would not move
  // it), else the ensemble's log-probabilities.
  at::Tensor argmax_scores(const at::Tensor& tokens);

  // Keeps the rows `index` of every model's state (beam reordering, dropping finished sentences);
  // `same_sentences` as in DecoderState::select.
  void select(const at::Tensor& index, bool same_sentences = false);

  // The first model's cross-attention of the last step [rows, S] (SearchOptions::alignment).
  const at::Tensor& attention() const { return states_.front().attention; }

 private:
  at::Tensor logits(size_t m, const at::Tensor& tokens);
  // Scores over the shortlist spread back into [rows, V], -inf outside it.
  at::Tensor full_vocabulary(const at::Tensor& scores) const;

  const Ensemble& ensemble_;
  std::vector<DecoderState> states_;
  at::Tensor shortlist_;
  std::vector<std::pair<at::Tensor, at::Tensor>> shortlisted_;  // per model: rows of M and b
  int64_t vocab_ = 0;
  bool on_cpu_ = false;
};

}  // namespace yoke
