#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "decode/constraints.h"
#include "decode/shortlist.h"
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

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Per sentence: a·|x| + b, and never past the model's position table.
std::vector<int64_t> max_lengths(const at::Tensor& src, const SearchOptions& o, int64_t max_positions) {
  auto lens = src.ne(Vocab::pad).sum(1).to(at::kCPU, at::kLong).contiguous();
  std::vector<int64_t> out(lens.size(0));
  for (int64_t i = 0; i < lens.size(0); ++i)
    out[i] = std::clamp<int64_t>(int64_t(o.max_len_a * double(lens.data_ptr<int64_t>()[i]) + o.max_len_b), 1,
                                 max_positions - 1);
  return out;
}

// Room for a row's prefix and constraints on top of the usual limit (still within the positions).
void make_room(std::vector<int64_t>& max_len, const std::vector<Row>& rows, int64_t max_positions) {
  for (size_t i = 0; i < rows.size() && i < max_len.size(); ++i) {
    if (!rows[i].guide) continue;
    int64_t extra = 0;
    for (const auto& c : rows[i].guide->constraints) extra += int64_t(c.size());
    max_len[i] = std::min(max_positions - 1,
                          std::max(max_len[i] + extra, int64_t(rows[i].guide->prefix.size()) + extra + 1));
  }
}

int64_t max_positions(const Ensemble& e) {
  int64_t p = e.first().spec().max_positions;
  for (auto* m : e.models) p = std::min(p, m->spec().max_positions);
  return p;
}

// Scores [rows, V] with pad and bos ruled out: a search never emits them.
at::Tensor without_pad_and_bos(at::Tensor scores) {
  scores.select(1, Vocab::pad).fill_(kNegInf);
  scores.select(1, Vocab::bos).fill_(kNegInf);
  return scores;
}

at::Tensor index_tensor(const std::vector<int64_t>& v, const at::Device& device) {
  return at::tensor(v, at::kLong).to(device);
}

// The models of an ensemble decoding the same rows in step: each its own encoder output and
// incremental state, one combined score per step.
class Decoders {
 public:
  // Every source row is repeated `copies` times (one row per hypothesis of a beam).
  Decoders(const Ensemble& e, const at::Tensor& src, int64_t copies, const SearchOptions& o) : ensemble_(e) {
    at::Tensor expand;
    if (copies > 1)
      expand = at::arange(src.size(0), at::TensorOptions(at::kLong).device(src.device())).repeat_interleave(copies);
    if (o.shortlist) shortlist_ = o.shortlist->targets_for(src);
    for (auto* m : e.models) {
      auto enc = m->encode(src);
      if (expand.defined()) {
        enc.memory = enc.memory.index_select(0, expand);
        enc.mask = enc.mask.index_select(0, expand);
      }
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

  // The weighted mean of the models' log-probabilities of the next token [rows, V]; pad and bos
  // (and, under a shortlist, every id outside it) are -inf.
  at::Tensor log_probs(const at::Tensor& tokens) {
    at::Tensor sum;
    for (size_t m = 0; m < states_.size(); ++m) {
      auto lp = at::log_softmax(logits(m, tokens).to(at::kFloat), -1);
      // One model: its log-probabilities as they are. Weights 0.5/0.5 of one model twice give
      // exactly its own numbers (0.5·a + 0.5·a = a in floating point).
      if (ensemble_.size() > 1) lp.mul_(ensemble_.weights[m]);
      sum = sum.defined() ? sum.add_(lp) : lp;
    }
    return without_pad_and_bos(full_vocabulary(sum));
  }

  // What greedy search takes the argmax of: a single model's logits (the softmax would not move
  // it), else the ensemble's log-probabilities.
  at::Tensor argmax_scores(const at::Tensor& tokens) {
    if (ensemble_.size() > 1) return log_probs(tokens);
    return without_pad_and_bos(full_vocabulary(logits(0, tokens)));
  }

  void select(const at::Tensor& index) {
    for (auto& s : states_) s.select(index);
  }

  // The first model's cross-attention of the last step [rows, S] (SearchOptions::alignment).
  const at::Tensor& attention() const { return states_.front().attention; }

 private:
  at::Tensor logits(size_t m, const at::Tensor& tokens) {
    auto h = ensemble_.models[m]->step(tokens, states_[m]);
    if (!shortlist_.defined()) return ensemble_.models[m]->logits(h);
    const auto& [matrix, bias] = shortlisted_[m];
    return bias.defined() ? at::linear(h, matrix, bias) : at::linear(h, matrix);
  }

  // Scores over the shortlist spread back into [rows, V], -inf outside it.
  at::Tensor full_vocabulary(const at::Tensor& scores) const {
    if (!shortlist_.defined()) return scores;
    auto full = at::full({scores.size(0), vocab_}, kNegInf, scores.options());
    return full.index_copy_(1, shortlist_, scores);
  }

  const Ensemble& ensemble_;
  std::vector<DecoderState> states_;
  at::Tensor shortlist_;
  std::vector<std::pair<at::Tensor, at::Tensor>> shortlisted_;  // per model: rows of M and b
  int64_t vocab_ = 0;
};

// Sets the rows `force_rows` of lp to -inf except in the column of their forced token.
void force_tokens(at::Tensor& lp, const std::vector<int64_t>& force_rows, const std::vector<int64_t>& force_tokens) {
  if (force_rows.empty()) return;
  const auto device = lp.device();
  auto rows = index_tensor(force_rows, device), toks = index_tensor(force_tokens, device);
  auto kept = lp.index({rows, toks}).clone();
  lp.index_fill_(0, rows, kNegInf);
  lp.index_put_({rows, toks}, kept);
}

// The attention of row `row` over its sentence's real source positions (eos included).
std::vector<float> attention_row(const at::Tensor& attention_cpu, int64_t row, int64_t source_len) {
  const float* p = attention_cpu.data_ptr<float>() + row * attention_cpu.size(1);
  return std::vector<float>(p, p + source_len);
}

// A sentence's own random numbers: the same for the same seed and input index in any batch.
std::mt19937_64 sentence_rng(uint64_t seed, size_t index) {
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(index), uint32_t(uint64_t(index) >> 32)};
  return std::mt19937_64(seq);
}

double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * (1.0 / 9007199254740992.0); }

// Draws from probabilities p[0..n) (best first), keeping the first `keep` of them.
int64_t draw(const float* p, int64_t keep, std::mt19937_64& rng) {
  double mass = 0;
  for (int64_t j = 0; j < keep; ++j) mass += double(p[j]);
  double u = uniform01(rng) * mass;
  for (int64_t j = 0; j < keep; ++j) {
    u -= double(p[j]);
    if (u < 0) return j;
  }
  return keep - 1;
}

}  // namespace

std::vector<std::vector<int>> greedy_search(const Ensemble& model, const at::Tensor& src, const SearchOptions& opts) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0);
  const auto max_len = max_lengths(src, opts, max_positions(model));
  Decoders decoders(model, src, 1, opts);
  std::vector<std::vector<int>> out(n);
  std::vector<int64_t> rows(n);  // row -> sentence
  for (int64_t i = 0; i < n; ++i) rows[i] = i;
  auto tokens = at::full({n}, Vocab::bos, at::TensorOptions(at::kLong).device(src.device()));
  for (int64_t t = 0; !rows.empty(); ++t) {
    auto next = decoders.argmax_scores(tokens).argmax(-1).to(at::kCPU).contiguous();
    const int64_t* nx = next.data_ptr<int64_t>();
    std::vector<int64_t> keep, keep_rows;
    std::vector<int64_t> keep_tokens;
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t s = rows[r];
      if (nx[r] == Vocab::eos || t + 1 >= max_len[s]) {
        if (nx[r] != Vocab::eos) out[s].push_back(int(nx[r]));
        continue;
      }
      out[s].push_back(int(nx[r]));
      keep.push_back(int64_t(r));
      keep_rows.push_back(s);
      keep_tokens.push_back(nx[r]);
    }
    if (keep.size() != rows.size() && !keep.empty()) decoders.select(index_tensor(keep, src.device()));
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

std::vector<std::vector<Hypothesis>> beam_search_nbest(const Ensemble& model, const at::Tensor& src,
                                                       const SearchOptions& opts, int nbest,
                                                       const std::vector<Row>& guides) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0), k = std::max(1, opts.beam);
  if (!guides.empty() && int64_t(guides.size()) != n)
    throw std::logic_error("beam_search_nbest: rows must be empty or one per source");
  auto max_len = max_lengths(src, opts, max_positions(model));
  make_room(max_len, guides, max_positions(model));
  const auto device = src.device();
  const auto source_lens = src.ne(Vocab::pad).sum(1).to(at::kCPU, at::kLong).contiguous();
  // Every sentence's encoder output is repeated k times, one row per hypothesis.
  Decoders decoders(model, src, k, opts);
  static const std::vector<int> kNoPrefix;
  static const std::vector<std::vector<int>> kNoConstraints;
  auto prefix_of = [&](int64_t s) -> const std::vector<int>& {
    return guides.empty() || !guides[s].guide ? kNoPrefix : guides[s].guide->prefix;
  };
  auto constraints_of = [&](int64_t s) -> const std::vector<std::vector<int>>& {
    return guides.empty() || !guides[s].guide ? kNoConstraints : guides[s].guide->constraints;
  };

  std::vector<std::vector<Hypothesis>> finished(n);
  std::vector<int64_t> active(n);  // active[i] = sentence of rows [i·k, (i+1)·k)
  for (int64_t i = 0; i < n; ++i) active[i] = i;
  std::vector<std::vector<int>> hist(n * k);
  std::vector<std::vector<std::vector<float>>> attn_hist(opts.alignment ? n * k : 0);
  std::vector<ConstraintState> cstate(n * k);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t b = 0; b < k; ++b) cstate[i * k + b] = initial_constraint_state(constraints_of(i).size());
  std::vector<float> score_v(n * k, kNegInf);
  for (int64_t i = 0; i < n; ++i) score_v[i * k] = 0;  // at the start only one live beam
  auto tokens = at::full({n * k}, Vocab::bos, at::TensorOptions(at::kLong).device(device));

  for (int64_t t = 0; !active.empty(); ++t) {
    const int64_t rows = int64_t(active.size()) * k;
    auto lp = decoders.log_probs(tokens);
    const int64_t vocab = lp.size(1);
    at::Tensor attention;
    if (opts.alignment) attention = decoders.attention().to(at::kCPU, at::kFloat).contiguous();
    // Sentences whose hypotheses hold max_len tokens may only end (as greedy search does);
    // those within their prefix must take its next token.
    std::vector<int64_t> force_rows, force_toks;
    for (size_t i = 0; i < active.size(); ++i) {
      const auto& prefix = prefix_of(active[i]);
      const bool at_end = t >= max_len[active[i]], in_prefix = t < int64_t(prefix.size());
      if (!at_end && !in_prefix) continue;
      for (int64_t b = 0; b < k; ++b) {
        force_rows.push_back(int64_t(i) * k + b);
        force_toks.push_back(at_end ? int64_t(Vocab::eos) : int64_t(prefix[size_t(t)]));
      }
    }
    force_tokens(lp, force_rows, force_toks);
    auto scores = at::tensor(score_v, at::kFloat).to(device).view({rows, 1});
    auto cand = (lp + scores).view({int64_t(active.size()), k * vocab});
    auto top = cand.topk(2 * k, 1);
    auto vals = std::get<0>(top).to(at::kCPU).contiguous();
    auto idxs = std::get<1>(top).to(at::kCPU).contiguous();
    const float* pv = vals.data_ptr<float>();
    const int64_t* pi = idxs.data_ptr<int64_t>();
    at::Tensor cand_cpu;  // constrained sentences read single candidates' scores
    auto cand_score = [&](int64_t i, int64_t row_in_sentence, int64_t tok) {
      if (!cand_cpu.defined()) cand_cpu = cand.to(at::kCPU).contiguous();
      return cand_cpu.data_ptr<float>()[i * k * vocab + row_in_sentence * vocab + tok];
    };

    std::vector<int64_t> parents, next_tokens, next_active;
    std::vector<float> next_scores;
    std::vector<std::vector<int>> next_hist;
    std::vector<std::vector<std::vector<float>>> next_attn;
    std::vector<ConstraintState> next_cstate;
    auto finish = [&](int64_t s, int64_t row, float v) {
      Hypothesis h{hist[row], v, v / std::pow(double(hist[row].size() + 1), opts.lenpen), {}};
      if (opts.alignment) {
        h.attention = attn_hist[row];
        h.attention.push_back(attention_row(attention, row, source_lens.data_ptr<int64_t>()[s]));
      }
      finished[s].push_back(std::move(h));
    };
    for (size_t i = 0; i < active.size(); ++i) {
      const int64_t s = active[i];
      const auto& constraints = constraints_of(s);
      // (row, token, score, constraint state) of the hypotheses the sentence goes on with
      struct Next {
        int64_t row, token;
        float score;
        ConstraintState state;
      };
      std::vector<Next> live;
      if (constraints.empty()) {
        for (int64_t j = 0; j < 2 * k && int64_t(live.size()) < k; ++j) {
          const float v = pv[i * 2 * k + j];
          if (v == kNegInf) break;
          const int64_t row = int64_t(i) * k + pi[i * 2 * k + j] / vocab;
          const int64_t tok = pi[i * 2 * k + j] % vocab;
          if (tok == Vocab::eos) {
            // As in fairseq: an ending counts only when it ranks among the k best candidates.
            if (j < k && int64_t(finished[s].size()) < k) finish(s, row, v);
          } else {
            live.push_back({row, tok, v, cstate[row]});
          }
        }
      } else {
        // Dynamic beam allocation: the best candidates, each hypothesis's best continuation and
        // the tokens that advance its constraints; an ending only where all are met.
        int total = 0;
        for (const auto& c : constraints) total += int(c.size());
        std::vector<ConstraintCandidate> pool;
        std::vector<std::pair<int64_t, int64_t>> seen;
        auto add = [&](int64_t b, int64_t tok, float v) {
          const int64_t row = int64_t(i) * k + b;
          if (v == kNegInf || std::find(seen.begin(), seen.end(), std::make_pair(row, tok)) != seen.end()) return;
          if (tok == Vocab::eos && !cstate[row].all_met()) return;
          seen.emplace_back(row, tok);
          pool.push_back({row, tok, v, tok == Vocab::eos ? total : cstate[row].after(int(tok), constraints).tokens_met(constraints)});
        };
        for (int64_t j = 0; j < 2 * k; ++j) add(pi[i * 2 * k + j] / vocab, pi[i * 2 * k + j] % vocab, pv[i * 2 * k + j]);
        const bool forced = t >= max_len[s] || t < int64_t(prefix_of(s).size());
        for (int64_t b = 0; b < k && !forced; ++b) {
          const int64_t row = int64_t(i) * k + b;
          if (score_v[row] == kNegInf) continue;
          for (int tok : cstate[row].wanted(constraints)) add(b, tok, cand_score(int64_t(i), b, tok));
          if (cstate[row].all_met()) add(b, Vocab::eos, cand_score(int64_t(i), b, Vocab::eos));
        }
        for (const auto& c : allocate_beam(pool, int(k), total)) {
          if (c.token == Vocab::eos) {
            if (int64_t(finished[s].size()) < k) finish(s, c.row, c.score);
          } else {
            live.push_back({c.row, c.token, c.score, cstate[c.row].after(int(c.token), constraints)});
          }
        }
        // Out of room with no hypothesis that holds every phrase: the best one ends all the same.
        if (t >= max_len[s] && finished[s].empty()) {
          int64_t best = int64_t(i) * k;
          for (int64_t b = 1; b < k; ++b) if (score_v[int64_t(i) * k + b] > score_v[best]) best = int64_t(i) * k + b;
          if (score_v[best] != kNegInf) finish(s, best, cand_score(int64_t(i), best - int64_t(i) * k, Vocab::eos));
        }
      }
      if (int64_t(finished[s].size()) >= k || t >= max_len[s] || live.empty()) continue;
      next_active.push_back(s);
      for (int64_t b = 0; b < k; ++b) {
        // Fewer than k live candidates: pad with a dead copy of the first.
        const Next& c = b < int64_t(live.size()) ? live[b] : live[0];
        parents.push_back(c.row);
        next_tokens.push_back(c.token);
        next_scores.push_back(b < int64_t(live.size()) ? c.score : kNegInf);
        next_hist.push_back(hist[c.row]);
        next_hist.back().push_back(int(c.token));
        next_cstate.push_back(c.state);
        if (opts.alignment) {
          next_attn.push_back(attn_hist[c.row]);
          next_attn.back().push_back(attention_row(attention, c.row, source_lens.data_ptr<int64_t>()[s]));
        }
      }
    }
    if (next_active.empty()) break;
    decoders.select(index_tensor(parents, device));
    tokens = index_tensor(next_tokens, device);
    score_v = std::move(next_scores);
    hist = std::move(next_hist);
    attn_hist = std::move(next_attn);
    cstate = std::move(next_cstate);
    active = std::move(next_active);
  }

  // Best first; among equal scores the one that finished first, as before n-best lists.
  for (auto& list : finished) {
    std::stable_sort(list.begin(), list.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (int64_t(list.size()) > std::max(1, nbest)) list.resize(size_t(std::max(1, nbest)));
  }
  return finished;
}

std::vector<std::vector<Hypothesis>> sample_search(const Ensemble& model, const at::Tensor& src,
                                                   const SearchOptions& opts, const std::vector<Row>& rows_in) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0);
  if (int64_t(rows_in.size()) != n) throw std::logic_error("sample_search: one Row per source");
  if (opts.sampling == Sampling::none) throw std::logic_error("sample_search: no sampling method");
  auto max_len = max_lengths(src, opts, max_positions(model));
  make_room(max_len, rows_in, max_positions(model));
  Decoders decoders(model, src, 1, opts);
  std::vector<std::vector<Hypothesis>> out(n, std::vector<Hypothesis>(1));
  std::vector<std::mt19937_64> rng;
  for (const auto& r : rows_in) rng.push_back(sentence_rng(opts.seed, r.index));
  std::vector<int64_t> rows(n);  // row -> sentence
  std::iota(rows.begin(), rows.end(), 0);
  auto tokens = at::full({n}, Vocab::bos, at::TensorOptions(at::kLong).device(src.device()));
  for (int64_t t = 0; !rows.empty(); ++t) {
    auto lp = decoders.log_probs(tokens).to(at::kCPU).contiguous();
    auto scaled = opts.temperature == 1.0 ? lp : lp / opts.temperature;
    // Candidates best first with their probabilities: the top k, or every token (top p).
    at::Tensor vals, ids;
    if (opts.sampling == Sampling::topk) {
      std::tie(vals, ids) = scaled.topk(std::min<int64_t>(std::max(1, opts.topk), scaled.size(1)), 1);
    } else {
      std::tie(vals, ids) = scaled.sort(1, /*descending=*/true);
    }
    auto probs = at::softmax(vals, 1).contiguous();
    ids = ids.contiguous();
    const int64_t width = probs.size(1);
    std::vector<int64_t> keep, keep_rows, keep_tokens;
    for (size_t r = 0; r < rows.size(); ++r) {
      const int64_t s = rows[r];
      const auto* prefix = rows_in[s].guide ? &rows_in[s].guide->prefix : nullptr;
      int64_t tok;
      if (prefix && t < int64_t(prefix->size())) {
        tok = (*prefix)[size_t(t)];
      } else {
        const float* p = probs.data_ptr<float>() + int64_t(r) * width;
        int64_t cut = width;
        if (opts.sampling == Sampling::topp) {  // the smallest set holding topp of the probability
          double mass = 0;
          for (cut = 0; cut < width && mass < opts.topp; ++cut) mass += double(p[cut]);
          cut = std::max<int64_t>(cut, 1);
        }
        tok = ids.data_ptr<int64_t>()[int64_t(r) * width + draw(p, cut, rng[size_t(s)])];
      }
      Hypothesis& h = out[size_t(s)].front();
      h.log_prob += double(lp.data_ptr<float>()[int64_t(r) * lp.size(1) + tok]);
      if (tok == Vocab::eos || t + 1 >= max_len[s]) {
        if (tok != Vocab::eos) h.tokens.push_back(int(tok));
        h.score = h.log_prob / std::pow(double(h.tokens.size() + 1), opts.lenpen);
        continue;
      }
      h.tokens.push_back(int(tok));
      keep.push_back(int64_t(r));
      keep_rows.push_back(s);
      keep_tokens.push_back(tok);
    }
    if (keep.size() != rows.size() && !keep.empty()) decoders.select(index_tensor(keep, src.device()));
    rows = keep_rows;
    tokens = index_tensor(keep_tokens, src.device());
  }
  return out;
}

}  // namespace yoke
