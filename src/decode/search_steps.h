// The parts of beam search (decode/search.cpp) besides scoring and keeping the k best: each a
// small component the loop calls at a fixed point of every step.
//   before selection   LengthLimit (a hypothesis at its sentence's limit may only end) and
//                      PrefixForcing (a hypothesis within its prefix takes the prefix's token),
//                      applied to the log-probabilities through ForcedTokens
//   selection          ConstraintSearch chooses a constrained sentence's candidates (dynamic beam
//                      allocation, decode/constraints.h) where plain sentences take the k best
//   after selection    ConstraintSearch and AlignmentRecorder: each new hypothesis's state is its
//                      parent's, advanced by the token it took
//   when one ends      AlignmentRecorder gives the hypothesis its cross-attention rows
// The shortlist acts before scoring (decode/ensemble_scorer.h) and sampling replaces selection
// (decode/token_sampler.h). Rows of a step's tensors are hypotheses: sentence i of the active ones
// holds rows [i·k, (i+1)·k).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "decode/constraints.h"
#include "decode/search.h"

namespace yoke {

// How many target tokens each sentence may have: trunc(a·|x| + b) for a source of |x| tokens
// (eos included), at least 1 and at most the positions the models have minus one, plus room for
// the row's prefix and constraints.
class LengthLimit {
 public:
  LengthLimit(const at::Tensor& src, const SearchOptions& o, int64_t max_positions, const std::vector<Row>& rows = {});
  int64_t of(int64_t sentence) const { return max_len_[size_t(sentence)]; }
  // Beam search: hypotheses that hold the limit's tokens at step t may only end.
  bool at_end(int64_t sentence, int64_t t) const { return t >= of(sentence); }
  // Greedy search and sampling: the token chosen at step t is the last one.
  bool last(int64_t sentence, int64_t t) const { return t + 1 >= of(sentence); }

 private:
  std::vector<int64_t> max_len_;
};

// The prefixes of a batch's rows (TargetGuide::prefix): the token a sentence must take at step t.
class PrefixForcing {
 public:
  explicit PrefixForcing(const std::vector<Row>& rows);  // empty: no prefixes
  int64_t token(int64_t sentence, int64_t t) const;      // or -1 past (or without) a prefix

 private:
  std::vector<const std::vector<int>*> prefixes_;  // per sentence, or null
};

// The rows of one step whose next token is fixed: every other token of those rows becomes -inf,
// the fixed one keeps its log-probability.
class ForcedTokens {
 public:
  void add(int64_t row, int64_t token) {
    rows_.push_back(row);
    tokens_.push_back(token);
  }
  void apply(at::Tensor& log_probs) const;
  // The same on row `row` alone (its `vocab` floats at `values`), for rows prepared one at a time.
  void apply_to_row(float* values, int64_t row, int64_t vocab) const;

 private:
  std::vector<int64_t> rows_, tokens_;
};

// Lexically constrained search over a batch (TargetGuide::constraints): where each hypothesis
// stands with its sentence's phrases, and the choice of a constrained sentence's candidates.
class ConstraintSearch {
 public:
  ConstraintSearch(const std::vector<Row>& rows, int64_t sentences, int64_t beam);
  bool constrained(int64_t sentence) const { return !of(sentence).empty(); }
  const std::vector<std::vector<int>>& of(int64_t sentence) const;
  const ConstraintState& state(int64_t row) const { return states_[size_t(row)]; }

  // The candidates sentence `sentence` goes on with, best first: its 2k best (top_scores, and
  // top_ids as hypothesis·vocab + token, hypotheses counted from `first_row`), each live
  // hypothesis's best continuation and, unless the step's tokens are `forced`, the tokens that
  // advance its phrases (their scores from score_of(hypothesis, token)); the beam shared among
  // banks of constraint tokens met (allocate_beam). An eos only where every phrase is held.
  std::vector<ConstraintCandidate> choose(int64_t sentence, int64_t first_row, const float* top_scores,
                                          const int64_t* top_ids, int64_t vocab, const std::vector<float>& row_scores,
                                          bool forced, const std::function<float(int64_t, int64_t)>& score_of) const;

  // After selection: hypothesis j of the next step continues row parents[j] with tokens[j].
  void advance(const std::vector<int64_t>& parents, const std::vector<int64_t>& tokens,
               const std::vector<int64_t>& sentences);

 private:
  int64_t beam_;
  std::vector<const std::vector<std::vector<int>>*> constraints_;  // per sentence, or null
  std::vector<ConstraintState> states_;                              // per row
};

// SearchOptions::alignment: each hypothesis's cross-attention over its source, one row per token
// (the first model's, averaged over layers and heads; Hypothesis::attention).
class AlignmentRecorder {
 public:
  AlignmentRecorder(bool on, const at::Tensor& src, int64_t rows);
  bool on() const { return on_; }
  void observe(const at::Tensor& attention);  // this step's [rows, S]
  // A hypothesis ending at `row` (of sentence `sentence`): its history and this step's row.
  void finish(Hypothesis& h, int64_t row, int64_t sentence) const;
  void advance(const std::vector<int64_t>& parents, const std::vector<int64_t>& sentences);

 private:
  std::vector<float> step_row(int64_t row, int64_t sentence) const;
  bool on_;
  at::Tensor source_lens_, step_;                         // CPU: [B] long, [rows, S] float
  std::vector<std::vector<std::vector<float>>> history_;  // per row: per token
};

}  // namespace yoke
