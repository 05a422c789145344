#include "decode/search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "text/vocab.h"

namespace yoke {
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

// Scores [rows, V] with pad and bos ruled out: a search never emits them.
at::Tensor without_pad_and_bos(at::Tensor scores) {
  scores.select(1, Vocab::pad).fill_(kNegInf);
  scores.select(1, Vocab::bos).fill_(kNegInf);
  return scores;
}

// Log-probabilities of the next token; never pad or bos.
at::Tensor next_log_probs(Transformer& model, const at::Tensor& tokens, DecoderState& state) {
  return without_pad_and_bos(at::log_softmax(model.logits(model.step(tokens, state)).to(at::kFloat), -1));
}

at::Tensor index_tensor(const std::vector<int64_t>& v, const at::Device& device) {
  return at::tensor(v, at::kLong).to(device);
}

}  // namespace

std::vector<std::vector<int>> greedy_search(Transformer& model, const at::Tensor& src, const SearchOptions& opts) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0);
  const auto max_len = max_lengths(src, opts, model.spec().max_positions);
  auto enc = model.encode(src);
  auto state = model.start(&enc);
  std::vector<std::vector<int>> out(n);
  std::vector<int64_t> rows(n);  // row -> sentence
  for (int64_t i = 0; i < n; ++i) rows[i] = i;
  auto tokens = at::full({n}, Vocab::bos, at::TensorOptions(at::kLong).device(src.device()));
  for (int64_t t = 0; !rows.empty(); ++t) {
    // argmax of the logits is argmax of the log-probabilities: no softmax over V needed.
    auto next = without_pad_and_bos(model.logits(model.step(tokens, state))).argmax(-1).to(at::kCPU).contiguous();
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
    if (keep.size() != rows.size() && !keep.empty()) state.select(index_tensor(keep, src.device()));
    rows = keep_rows;
    tokens = index_tensor(keep_tokens, src.device());
  }
  return out;
}

std::vector<std::vector<int>> beam_search(Transformer& model, const at::Tensor& src, const SearchOptions& opts) {
  auto lists = beam_search_nbest(model, src, opts, 1);
  std::vector<std::vector<int>> out(lists.size());
  for (size_t s = 0; s < lists.size(); ++s)
    if (!lists[s].empty()) out[s] = std::move(lists[s].front().tokens);
  return out;
}

std::vector<std::vector<Hypothesis>> beam_search_nbest(Transformer& model, const at::Tensor& src,
                                                       const SearchOptions& opts, int nbest) {
  at::NoGradGuard no_grad;
  const int64_t n = src.size(0), k = std::max(1, opts.beam);
  const auto max_len = max_lengths(src, opts, model.spec().max_positions);
  const auto device = src.device();
  // Every sentence's encoder output is repeated k times, one row per hypothesis.
  auto enc = model.encode(src);
  auto expand = at::arange(n, at::TensorOptions(at::kLong).device(device)).repeat_interleave(k);
  enc.memory = enc.memory.index_select(0, expand);
  enc.mask = enc.mask.index_select(0, expand);
  auto state = model.start(&enc);

  std::vector<std::vector<Hypothesis>> finished(n);
  std::vector<int64_t> active(n);  // active[i] = sentence of rows [i·k, (i+1)·k)
  for (int64_t i = 0; i < n; ++i) active[i] = i;
  std::vector<std::vector<int>> hist(n * k);
  std::vector<float> score_v(n * k, kNegInf);
  for (int64_t i = 0; i < n; ++i) score_v[i * k] = 0;  // at the start only one live beam
  auto tokens = at::full({n * k}, Vocab::bos, at::TensorOptions(at::kLong).device(device));

  for (int64_t t = 0; !active.empty(); ++t) {
    const int64_t rows = int64_t(active.size()) * k;
    auto lp = next_log_probs(model, tokens, state);
    const int64_t vocab = lp.size(1);
    // Sentences whose hypotheses hold max_len tokens may only end (as greedy search does).
    std::vector<int64_t> forced;
    for (size_t i = 0; i < active.size(); ++i)
      if (t >= max_len[active[i]]) for (int64_t b = 0; b < k; ++b) forced.push_back(int64_t(i) * k + b);
    if (!forced.empty()) {
      auto idx = index_tensor(forced, device);
      auto eos_col = lp.index_select(0, idx).select(1, Vocab::eos).clone();
      lp.index_fill_(0, idx, kNegInf);
      lp.select(1, Vocab::eos).index_copy_(0, idx, eos_col);
    }
    auto scores = at::tensor(score_v, at::kFloat).to(device).view({rows, 1});
    auto cand = (lp + scores).view({int64_t(active.size()), k * vocab});
    auto top = cand.topk(2 * k, 1);
    auto vals = std::get<0>(top).to(at::kCPU).contiguous();
    auto idxs = std::get<1>(top).to(at::kCPU).contiguous();
    const float* pv = vals.data_ptr<float>();
    const int64_t* pi = idxs.data_ptr<int64_t>();

    std::vector<int64_t> parents, next_tokens, next_active;
    std::vector<float> next_scores;
    std::vector<std::vector<int>> next_hist;
    for (size_t i = 0; i < active.size(); ++i) {
      const int64_t s = active[i];
      std::vector<int64_t> live;
      for (int64_t j = 0; j < 2 * k && int64_t(live.size()) < k; ++j) {
        const float v = pv[i * 2 * k + j];
        if (v == kNegInf) break;
        const int64_t row = int64_t(i) * k + pi[i * 2 * k + j] / vocab;
        const int64_t tok = pi[i * 2 * k + j] % vocab;
        if (tok == Vocab::eos) {
          // As in fairseq: an ending counts only when it ranks among the k best candidates.
          if (j < k && int64_t(finished[s].size()) < k)
            finished[s].push_back({hist[row], v, v / std::pow(double(hist[row].size() + 1), opts.lenpen)});
        } else {
          live.push_back(j);
        }
      }
      if (int64_t(finished[s].size()) >= k || t >= max_len[s] || live.empty()) continue;
      next_active.push_back(s);
      for (int64_t b = 0; b < k; ++b) {
        // Fewer than k live candidates: pad with a dead copy of the first.
        const int64_t j = b < int64_t(live.size()) ? live[b] : live[0];
        const int64_t row = int64_t(i) * k + pi[i * 2 * k + j] / vocab;
        parents.push_back(row);
        next_tokens.push_back(pi[i * 2 * k + j] % vocab);
        next_scores.push_back(b < int64_t(live.size()) ? pv[i * 2 * k + j] : kNegInf);
        next_hist.push_back(hist[row]);
        next_hist.back().push_back(int(next_tokens.back()));
      }
    }
    if (next_active.empty()) break;
    state.select(index_tensor(parents, device));
    tokens = index_tensor(next_tokens, device);
    score_v = std::move(next_scores);
    hist = std::move(next_hist);
    active = std::move(next_active);
  }

  // Best first; among equal scores the one that finished first, as before n-best lists.
  for (auto& list : finished) {
    std::stable_sort(list.begin(), list.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
    if (int64_t(list.size()) > std::max(1, nbest)) list.resize(size_t(std::max(1, nbest)));
  }
  return finished;
}

}  // namespace yoke
