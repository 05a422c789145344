#include "decode/search_steps.h"

#include <algorithm>
#include <limits>

#include "decode/search_tensors.h"
#include "text/vocab.h"

namespace yoke {
namespace {

at::Tensor source_lengths(const at::Tensor& src) { return src.ne(Vocab::pad).sum(1).to(at::kCPU, at::kLong).contiguous(); }

}  // namespace

LengthLimit::LengthLimit(const at::Tensor& src, const SearchOptions& o, int64_t max_positions,
                         const std::vector<Row>& rows) {
  const auto lens = source_lengths(src);
  max_len_.resize(size_t(lens.size(0)));
  for (int64_t i = 0; i < lens.size(0); ++i)
    max_len_[size_t(i)] = std::clamp<int64_t>(int64_t(o.max_len_a * double(lens.data_ptr<int64_t>()[i]) + o.max_len_b),
                                              1, max_positions - 1);
  // Room for a row's prefix and constraints on top of the usual limit (still within the positions).
  for (size_t i = 0; i < rows.size() && i < max_len_.size(); ++i) {
    if (!rows[i].guide) continue;
    int64_t extra = 0;
    for (const auto& c : rows[i].guide->constraints) extra += int64_t(c.size());
    max_len_[i] = std::min(max_positions - 1,
                           std::max(max_len_[i] + extra, int64_t(rows[i].guide->prefix.size()) + extra + 1));
  }
}

PrefixForcing::PrefixForcing(const std::vector<Row>& rows) {
  for (const auto& r : rows) prefixes_.push_back(r.guide && !r.guide->prefix.empty() ? &r.guide->prefix : nullptr);
}

int64_t PrefixForcing::token(int64_t sentence, int64_t t) const {
  if (size_t(sentence) >= prefixes_.size() || !prefixes_[size_t(sentence)]) return -1;
  const auto& p = *prefixes_[size_t(sentence)];
  return t < int64_t(p.size()) ? p[size_t(t)] : -1;
}

void ForcedTokens::apply(at::Tensor& lp) const {
  if (rows_.empty()) return;
  const auto device = lp.device();
  auto rows = index_tensor(rows_, device), toks = index_tensor(tokens_, device);
  auto kept = lp.index({rows, toks}).clone();
  lp.index_fill_(0, rows, kNegInf);
  lp.index_put_({rows, toks}, kept);
}

void ForcedTokens::apply_to_row(float* values, int64_t row, int64_t vocab) const {
  std::vector<std::pair<int64_t, float>> kept;  // as apply(): every fixed token of the row keeps its value
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i] == row) kept.emplace_back(tokens_[i], values[tokens_[i]]);
  if (kept.empty()) return;
  std::fill(values, values + vocab, kNegInf);
  for (const auto& [token, value] : kept) values[token] = value;
}

ConstraintSearch::ConstraintSearch(const std::vector<Row>& rows, int64_t sentences, int64_t beam) : beam_(beam) {
  constraints_.assign(size_t(sentences), nullptr);
  for (size_t i = 0; i < rows.size() && i < size_t(sentences); ++i)
    if (rows[i].guide && !rows[i].guide->constraints.empty()) constraints_[i] = &rows[i].guide->constraints;
  states_.resize(size_t(sentences * beam));
  for (int64_t i = 0; i < sentences; ++i)
    for (int64_t b = 0; b < beam; ++b) states_[size_t(i * beam + b)] = initial_constraint_state(of(i).size());
}

const std::vector<std::vector<int>>& ConstraintSearch::of(int64_t sentence) const {
  static const std::vector<std::vector<int>> kNone;
  const auto* c = constraints_[size_t(sentence)];
  return c ? *c : kNone;
}

std::vector<ConstraintCandidate> ConstraintSearch::choose(int64_t sentence, int64_t first_row, const float* top_scores,
                                                          const int64_t* top_ids, int64_t vocab,
                                                          const std::vector<float>& row_scores, bool forced,
                                                          const std::function<float(int64_t, int64_t)>& score_of) const {
  const auto& constraints = of(sentence);
  int total = 0;
  for (const auto& c : constraints) total += int(c.size());
  std::vector<ConstraintCandidate> pool;
  std::vector<std::pair<int64_t, int64_t>> seen;
  auto add = [&](int64_t b, int64_t tok, float v) {
    const int64_t row = first_row + b;
    if (v == kNegInf || std::find(seen.begin(), seen.end(), std::make_pair(row, tok)) != seen.end()) return;
    if (tok == Vocab::eos && !states_[size_t(row)].all_met()) return;
    seen.emplace_back(row, tok);
    pool.push_back({row, tok, v, tok == Vocab::eos ? total : states_[size_t(row)].after(int(tok), constraints).tokens_met(constraints)});
  };
  for (int64_t j = 0; j < 2 * beam_; ++j) add(top_ids[j] / vocab, top_ids[j] % vocab, top_scores[j]);
  for (int64_t b = 0; b < beam_ && !forced; ++b) {
    const int64_t row = first_row + b;
    if (row_scores[size_t(row)] == kNegInf) continue;
    for (int tok : states_[size_t(row)].wanted(constraints)) add(b, tok, score_of(b, tok));
    if (states_[size_t(row)].all_met()) add(b, Vocab::eos, score_of(b, Vocab::eos));
  }
  return allocate_beam(pool, int(beam_), total);
}

void ConstraintSearch::advance(const std::vector<int64_t>& parents, const std::vector<int64_t>& tokens,
                               const std::vector<int64_t>& sentences) {
  std::vector<ConstraintState> next;
  next.reserve(parents.size());
  for (size_t j = 0; j < parents.size(); ++j) {
    const auto& parent = states_[size_t(parents[j])];
    next.push_back(constrained(sentences[j]) ? parent.after(int(tokens[j]), of(sentences[j])) : parent);
  }
  states_ = std::move(next);
}

AlignmentRecorder::AlignmentRecorder(bool on, const at::Tensor& src, int64_t rows) : on_(on) {
  if (!on_) return;
  source_lens_ = source_lengths(src);
  history_.resize(size_t(rows));
}

void AlignmentRecorder::observe(const at::Tensor& attention) {
  if (on_) step_ = attention.to(at::kCPU, at::kFloat).contiguous();
}

std::vector<float> AlignmentRecorder::step_row(int64_t row, int64_t sentence) const {
  const float* p = step_.data_ptr<float>() + row * step_.size(1);
  return std::vector<float>(p, p + source_lens_.data_ptr<int64_t>()[sentence]);
}

void AlignmentRecorder::finish(Hypothesis& h, int64_t row, int64_t sentence) const {
  if (!on_) return;
  h.attention = history_[size_t(row)];
  h.attention.push_back(step_row(row, sentence));
}

void AlignmentRecorder::advance(const std::vector<int64_t>& parents, const std::vector<int64_t>& sentences) {
  if (!on_) return;
  std::vector<std::vector<std::vector<float>>> next;
  next.reserve(parents.size());
  for (size_t j = 0; j < parents.size(); ++j) {
    next.push_back(history_[size_t(parents[j])]);
    next.back().push_back(step_row(parents[j], sentences[j]));
  }
  history_ = std::move(next);
}

}  // namespace yoke
