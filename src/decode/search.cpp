#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "decode/beam_candidates.h"
#include "decode/ensemble_scorer.h"
#include "decode/row_argmax.h"
#include "decode/search_steps.h"
#include "decode/search_tensors.h"
#include "decode/token_sampler.h"
#include "text/vocab.h"
#include "util/error.h"

namespace yoke {

Ensemble::Ensemble(std::vector<Transformer*> ms, std::vector<double> ws) : models(std::move(ms)), weights(std::move(ws)) {
  if (models.empty()) throw InputError("an ensemble needs at least one model");
  if (weights.empty()) weights.assign(models.size(), 1.0);
  if (weights.size() != models.size())
    throw InputError(std::to_string(weights.size()) + " weights for " + std::to_string(models.size()) +
                     " models; give one weight per model");
  double largest = 0;
  for (double w : weights) {
    if (!(w > 0) || !std::isfinite(w)) throw InputError("ensemble weights must be positive numbers");
    largest = std::max(largest, w);
  }
  // Scaled by the largest first: 1e308 + 1e308 overflows to infinity, and every weight became 0
  // (every output empty).
  double sum = 0;
  for (double& w : weights) sum += (w /= largest);
  for (double& w : weights) w /= sum;
  for (auto* m : models)
    if (m->embeddings->spec().tgt_vocab != models.front()->embeddings->spec().tgt_vocab)
      throw InputError("the models of an ensemble need one target vocabulary; their sizes differ (" +
                       std::to_string(models.front()->embeddings->spec().tgt_vocab) + " and " +
                       std::to_string(m->embeddings->spec().tgt_vocab) + ")");
}

namespace {

int64_t max_positions(const Ensemble& e) {
  int64_t p = e.first().spec().max_positions;
  for (auto* m : e.models) p = std::min(p, m->spec().max_positions);
  return p;
}

// A hypothesis the search goes on with: the row it continues, the token it adds, its score.
struct Continuation {
  int64_t row, token;
  float score;
};

// One sentence's choice for the next step, in rank order: up to k hypotheses that go on, and the
// candidates that end (eos) and are kept while the sentence has fewer than k finished.
struct Selection {
  std::vector<Continuation> live, endings;
};

// Plain beam search's rule over a sentence's 2k best candidates (values, and indices row·V + token
// from row `first`): the first k that do not end go on; as in fairseq, an ending counts only when
// it ranks among the k best.
Selection select_plain(const float* values, const int64_t* index, int64_t k, int64_t vocab, int64_t first) {
  Selection out;
  for (int64_t j = 0; j < 2 * k && int64_t(out.live.size()) < k; ++j) {
    if (values[j] == kNegInf) break;
    const Continuation c{first + index[j] / vocab, index[j] % vocab, values[j]};
    if (c.token != Vocab::eos) out.live.push_back(c);
    else if (j < k) out.endings.push_back(c);
  }
  return out;
}

// Before selection: hypotheses at their length limit may only end (as greedy search does); those
// within their prefix take its next token. Rows [i·k, (i+1)·k) belong to sentence active[i].
ForcedTokens forced_tokens(const std::vector<int64_t>& active, int64_t k, int64_t t, const LengthLimit& limit,
                           const PrefixForcing& prefixes) {
  ForcedTokens forced;
  for (size_t i = 0; i < active.size(); ++i) {
    const int64_t s = active[i], token = limit.at_end(s, t) ? int64_t(Vocab::eos) : prefixes.token(s, t);
    if (token >= 0)
      for (int64_t b = 0; b < k; ++b) forced.add(int64_t(i) * k + b, token);
  }
  return forced;
}

// Each list best first (among equal scores the one that finished first), at most `nbest` long.
void keep_best(std::vector<std::vector<Hypothesis>>& lists, int nbest) {
  for (auto& list : lists) {
    std::stable_sort(list.begin(), list.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (int64_t(list.size()) > std::max(1, nbest)) list.resize(size_t(std::max(1, nbest)));
  }
}

}  // namespace

std::vector<std::vector<int>> greedy_search(const Ensemble& model, const at::Tensor& src, const SearchOptions& opts) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0);
  const LengthLimit limit(src, opts, max_positions(model));
  EnsembleScorer scorer(model, src, opts);
  std::vector<std::vector<int>> out(n);
  std::vector<int64_t> rows(n);  // row -> sentence
  std::iota(rows.begin(), rows.end(), 0);
  auto tokens = at::full({n}, Vocab::bos, at::TensorOptions(at::kLong).device(src.device()));
  for (int64_t t = 0; !rows.empty(); ++t) {
    const auto next = row_argmax(scorer.argmax_scores(tokens));
    const int64_t* nx = next.data();
    std::vector<int64_t> keep, keep_rows, keep_tokens;
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t s = rows[r];
      if (nx[r] == Vocab::eos || limit.last(s, t)) {
        if (nx[r] != Vocab::eos) out[s].push_back(int(nx[r]));
        continue;
      }
      out[s].push_back(int(nx[r]));
      keep.push_back(int64_t(r));
      keep_rows.push_back(s);
      keep_tokens.push_back(nx[r]);
    }
    if (keep.size() != rows.size() && !keep.empty()) scorer.select(index_tensor(keep, src.device()));
    rows = keep_rows;
    tokens = index_tensor(keep_tokens, src.device());
  }
  return out;
}

std::vector<std::vector<int>> beam_search(const Ensemble& model, const at::Tensor& src, const SearchOptions& opts) {
  auto lists = beam_search_nbest(model, src, opts, 1);
  std::vector<std::vector<int>> out(lists.size());
  for (size_t s = 0; s < lists.size(); ++s)
    if (!lists[s].empty()) out[s] = std::move(lists[s].front().tokens);
  return out;
}

// The loop: score every live hypothesis, fix what the length limit and the prefixes fix, take each
// sentence's k best candidates (or the constraints' choice), end hypotheses at eos, and carry the
// rest into the next step with their states (decode/search_steps.h).
std::vector<std::vector<Hypothesis>> beam_search_nbest(const Ensemble& model, const at::Tensor& src,
                                                       const SearchOptions& opts, int nbest,
                                                       const std::vector<Row>& guides) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0), k = std::max(1, opts.beam);
  if (!guides.empty() && int64_t(guides.size()) != n)
    throw std::logic_error("beam_search_nbest: rows must be empty or one per source");
  const auto device = src.device();
  const LengthLimit limit(src, opts, max_positions(model), guides);
  const PrefixForcing prefixes(guides);
  ConstraintSearch constraints(guides, n, k);
  AlignmentRecorder alignment(opts.alignment, src, n * k);
  // The first step has one live hypothesis a sentence (the others score -inf): it runs on one row
  // per sentence, its scores spread to the sentence's k rows, and the first selection gives each
  // hypothesis a row of the model's state.
  EnsembleScorer scorer(model, src, opts);

  std::vector<std::vector<Hypothesis>> finished(n);
  std::vector<int64_t> active(n);  // active[i] = sentence of rows [i·k, (i+1)·k)
  std::iota(active.begin(), active.end(), 0);
  std::vector<std::vector<int>> hist(n * k);
  std::vector<float> score_v(n * k, kNegInf);
  for (int64_t i = 0; i < n; ++i) score_v[i * k] = 0;  // at the start only one live beam
  auto tokens = at::full({n}, Vocab::bos, at::TensorOptions(at::kLong).device(device));

  for (int64_t t = 0; !active.empty(); ++t) {
    // After the first step (whose row a sentence is spread to k rows), a single model on the CPU
    // has its log-probabilities made a row at a time while best_candidates reads them, each row
    // still in cache: the same numbers as log_probs() and ForcedTokens::apply give.
    const bool by_row = t > 0 && scorer.normalizes_by_row();
    auto lp = by_row ? scorer.logits_to_normalize(tokens) : scorer.log_probs(tokens);
    at::Tensor attention = scorer.attention();
    if (t == 0 && k > 1) {
      const auto spread = at::arange(n, at::TensorOptions(at::kLong).device(device)).repeat_interleave(k);
      lp = lp.index_select(0, spread);
      if (attention.defined()) attention = attention.index_select(0, spread);
    }
    const int64_t vocab = lp.size(1);
    alignment.observe(attention);
    const ForcedTokens forced = forced_tokens(active, k, t, limit, prefixes);
    PrepareRow prepare;
    if (by_row) {
      const int64_t rows = lp.size(0);
      prepare = [&](float* row, int64_t r) {
        scorer.normalize_row(row, r + 1 < rows ? row + vocab : nullptr);
        forced.apply_to_row(row, r, vocab);
      };
    } else {
      forced.apply(lp);
    }
    // Each sentence's 2k best continuations: k of them may end.
    const auto top = best_candidates(lp, score_v, k, 2 * k, prepare);
    const float* pv = top.values.data();
    const int64_t* pi = top.index.data();
    at::Tensor lp_cpu;  // constrained sentences read single candidates' scores
    auto cand_score = [&](int64_t i, int64_t row_in_sentence, int64_t tok) {
      if (!lp_cpu.defined()) lp_cpu = lp.to(at::kCPU).contiguous();
      const int64_t row = i * k + row_in_sentence;
      return lp_cpu.data_ptr<float>()[row * vocab + tok] + score_v[size_t(row)];
    };

    std::vector<int64_t> parents, next_tokens, next_active, next_sentences;
    std::vector<float> next_scores;
    std::vector<std::vector<int>> next_hist;
    auto finish = [&](int64_t s, int64_t row, float v) {
      Hypothesis h{hist[row], v, v / std::pow(double(hist[row].size() + 1), opts.lenpen), {}};
      alignment.finish(h, row, s);
      finished[s].push_back(std::move(h));
    };
    for (size_t i = 0; i < active.size(); ++i) {
      const int64_t s = active[i], first = int64_t(i) * k;
      Selection sel;
      if (!constraints.constrained(s)) {
        sel = select_plain(pv + i * 2 * k, pi + i * 2 * k, k, vocab, first);
      } else {
        const bool fixed = limit.at_end(s, t) || prefixes.token(s, t) >= 0;
        for (const auto& c : constraints.choose(s, first, pv + i * 2 * k, pi + i * 2 * k, vocab, score_v, fixed,
                                                [&](int64_t b, int64_t tok) { return cand_score(int64_t(i), b, tok); }))
          (c.token == Vocab::eos ? sel.endings : sel.live).push_back({c.row, c.token, c.score});
      }
      for (const auto& e : sel.endings)
        if (int64_t(finished[s].size()) < k) finish(s, e.row, e.score);
      const std::vector<Continuation>& live = sel.live;
      // Constrained and out of room with no hypothesis that holds every phrase: the best one ends all the same.
      if (constraints.constrained(s) && limit.at_end(s, t) && finished[s].empty()) {
        int64_t best = first;
        for (int64_t b = 1; b < k; ++b) if (score_v[first + b] > score_v[best]) best = first + b;
        if (score_v[best] != kNegInf) finish(s, best, cand_score(int64_t(i), best - first, Vocab::eos));
      }
      if (int64_t(finished[s].size()) >= k || limit.at_end(s, t) || live.empty()) continue;
      next_active.push_back(s);
      for (int64_t b = 0; b < k; ++b) {
        // Fewer than k live candidates: pad with a dead copy of the first.
        const Continuation& c = b < int64_t(live.size()) ? live[b] : live[0];
        parents.push_back(c.row);
        next_tokens.push_back(c.token);
        next_sentences.push_back(s);
        next_scores.push_back(b < int64_t(live.size()) ? c.score : kNegInf);
        next_hist.push_back(hist[c.row]);
        next_hist.back().push_back(int(c.token));
      }
    }
    if (next_active.empty()) break;
    // next_active keeps active's order, so the same size means the same sentences in each block.
    // The first step's state has a row per sentence, not per hypothesis.
    std::vector<int64_t> state_rows = parents;
    if (t == 0)
      for (auto& r : state_rows) r /= k;
    scorer.select(index_tensor(state_rows, device), t > 0 && next_active.size() == active.size());
    constraints.advance(parents, next_tokens, next_sentences);
    alignment.advance(parents, next_sentences);
    tokens = index_tensor(next_tokens, device);
    score_v = std::move(next_scores);
    hist = std::move(next_hist);
    active = std::move(next_active);
  }

  keep_best(finished, nbest);
  return finished;
}

std::vector<std::vector<Hypothesis>> sample_search(const Ensemble& model, const at::Tensor& src,
                                                   const SearchOptions& opts, const std::vector<Row>& rows_in) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0);
  if (int64_t(rows_in.size()) != n) throw std::logic_error("sample_search: one Row per source");
  if (opts.sampling == Sampling::none) throw std::logic_error("sample_search: no sampling method");
  const LengthLimit limit(src, opts, max_positions(model), rows_in);
  const PrefixForcing prefixes(rows_in);
  TokenSampler sampler(opts);
  EnsembleScorer scorer(model, src, opts);
  std::vector<std::vector<Hypothesis>> out(n, std::vector<Hypothesis>(1));
  std::vector<std::mt19937_64> rng;
  for (const auto& r : rows_in) rng.push_back(TokenSampler::rng_for(opts.seed, r.index));
  std::vector<int64_t> rows(n);  // row -> sentence
  std::iota(rows.begin(), rows.end(), 0);
  auto tokens = at::full({n}, Vocab::bos, at::TensorOptions(at::kLong).device(src.device()));
  for (int64_t t = 0; !rows.empty(); ++t) {
    auto lp = scorer.log_probs(tokens).to(at::kCPU).contiguous();
    sampler.rank(lp);
    std::vector<int64_t> keep, keep_rows, keep_tokens;
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t s = rows[r], forced = prefixes.token(s, t);
      const int64_t tok = forced >= 0 ? forced : sampler.draw(int64_t(r), rng[size_t(s)]);
      Hypothesis& h = out[size_t(s)].front();
      h.log_prob += double(lp.data_ptr<float>()[int64_t(r) * lp.size(1) + tok]);
      if (tok == Vocab::eos || limit.last(s, t)) {
        if (tok != Vocab::eos) h.tokens.push_back(int(tok));
        h.score = h.log_prob / std::pow(double(h.tokens.size() + 1), opts.lenpen);
        continue;
      }
      h.tokens.push_back(int(tok));
      keep.push_back(int64_t(r));
      keep_rows.push_back(s);
      keep_tokens.push_back(tok);
    }
    if (keep.size() != rows.size() && !keep.empty()) scorer.select(index_tensor(keep, src.device()));
    rows = keep_rows;
    tokens = index_tensor(keep_tokens, src.device());
  }
  return out;
}

}  // namespace yoke
