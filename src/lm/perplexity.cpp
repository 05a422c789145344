#include "lm/perplexity.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "batch/batching.h"
#include "batch/lm_batch.h"
#include "loss/loss.h"
#include "text/vocab.h"
#include "util/error.h"

namespace yoke {
namespace {

// −log p(target) of each row of `hidden` [N, d], under the model's estimator, appended to `p`'s
// per-prediction record and added to its nll in order.
void add_nll(Transformer& model, const at::Tensor& hidden, const at::Tensor& target, Perplexity& p) {
  if (hidden.size(0) == 0) return;
  auto logp = at::log_softmax(model.logits(hidden).to(at::kFloat), -1);
  const auto nll = (-logp.gather(1, target.view({-1, 1}))).view({-1}).to(at::kCPU).contiguous();
  const auto ids = target.to(at::kCPU).to(at::kInt).contiguous();
  const float* v = nll.data_ptr<float>();
  const int32_t* t = ids.data_ptr<int32_t>();
  for (int64_t i = 0; i < nll.size(0); ++i) {
    p.targets.push_back(t[i]);
    p.token_nll.push_back(v[i]);
    p.nll += double(v[i]);
  }
}

// Scores the lines in batches of similar length; `order` receives the lines in the order scored.
void sentence_nll(Transformer& model, const std::vector<std::vector<int>>& lines, int64_t max_tokens, Perplexity& p,
                  std::vector<size_t>* order) {
  TokenizedCorpus corpus;
  for (const auto& l : lines) {
    if (int64_t(l.size()) + 1 > model.spec().max_positions)
      throw InputError("a line of " + std::to_string(l.size()) + " subwords is longer than the model's max_positions (" +
                       std::to_string(model.spec().max_positions) + "); score it in blocks (--block N)");
    corpus.add({}, l);
  }
  const auto lengths = lm_lengths(corpus, false);
  for (const auto& idx : make_token_batches(std::vector<uint32_t>(lengths.size(), 0), lengths, size_t(max_tokens), false, 0)) {
    const Batch b = make_lm_batch(corpus, idx, false);
    order->insert(order->end(), idx.begin(), idx.end());  // rows of the batch, whose positions add_nll keeps in order
    const auto device = model.parameters().front().device();
    const auto sel = select_real_positions(model.decode(b.tgt_in.to(device), nullptr), b.tgt_out.to(device), Vocab::pad);
    add_nll(model, sel.hidden, sel.target, p);
  }
}

void block_nll(Transformer& model, const std::vector<std::vector<int>>& lines, int64_t block, int64_t stride,
               int64_t max_tokens, Perplexity& p) {
  std::vector<int64_t> stream{Vocab::eos};
  for (const auto& l : lines) {
    stream.insert(stream.end(), l.begin(), l.end());
    stream.push_back(Vocab::eos);
  }
  // Windows of inputs [begin, end); predictions at positions ≥ scored_from are counted.
  struct Window { int64_t begin, end, scored_from; };
  std::vector<Window> windows;
  const int64_t last = int64_t(stream.size()) - 1;  // number of predictions
  for (int64_t begin = 0, done = 0; done < last; begin += stride) {
    const int64_t end = std::min(begin + block, last);
    windows.push_back({begin, end, done});
    done = end;
  }
  const int64_t rows = std::max<int64_t>(1, max_tokens / block);
  for (size_t w0 = 0; w0 < windows.size(); w0 += size_t(rows)) {
    const size_t n = std::min(windows.size() - w0, size_t(rows));
    auto in = at::zeros({int64_t(n), block}, at::kLong), out = at::zeros({int64_t(n), block}, at::kLong);
    auto keep = at::zeros({int64_t(n), block}, at::kBool);
    auto a = in.accessor<int64_t, 2>(), o = out.accessor<int64_t, 2>();
    auto k = keep.accessor<bool, 2>();
    for (size_t r = 0; r < n; ++r) {
      const Window& w = windows[w0 + r];
      for (int64_t p = w.begin; p < w.end; ++p) {
        a[r][p - w.begin] = stream[size_t(p)];
        o[r][p - w.begin] = stream[size_t(p) + 1];
        k[r][p - w.begin] = p >= w.scored_from;
      }
    }
    const auto device = model.parameters().front().device();
    const auto hidden = model.decode(in.to(device), nullptr);
    const auto rows_kept = keep.view({-1}).nonzero().squeeze(1).to(device);
    add_nll(model, hidden.reshape({-1, hidden.size(-1)}).index_select(0, rows_kept),
            out.to(device).view({-1}).index_select(0, rows_kept), p);
  }
}

}  // namespace

double Perplexity::per_subword() const { return std::exp(nll / double(std::max<int64_t>(1, subwords))); }
double Perplexity::per_word() const { return std::exp(nll / double(std::max<int64_t>(1, words))); }

std::string Perplexity::scoring() const {
  if (block == 0) return "sentence by sentence (each line from <s>, its end-of-line predicted)";
  std::string s = "as one stream in windows of " + std::to_string(block) + " tokens, stride " + std::to_string(stride);
  if (stride < block) s += " (every token sees at least " + std::to_string(block - stride) + " tokens of context after the first window)";
  else s += " (no overlap: the first token of each window has no context)";
  return s;
}

Perplexity lm_perplexity(Transformer& model, const std::vector<std::vector<int>>& lines, const std::vector<int64_t>& words,
                         int64_t block, int64_t stride, int64_t max_tokens) {
  if (lines.size() != words.size()) throw InputError("lm_perplexity: one word count per line needed");
  if (stride == 0) stride = block;
  if (block < 0 || stride < 0 || stride > block)
    throw InputError("perplexity: need block >= 0 and 0 < stride <= block (got block " + std::to_string(block) +
                     ", stride " + std::to_string(stride) + ")");
  if (block >= model.spec().max_positions)
    throw InputError("perplexity: block " + std::to_string(block) + " exceeds the model's max_positions (" +
                     std::to_string(model.spec().max_positions) + ")");
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  Perplexity p;
  p.block = block;
  p.stride = stride;
  p.lines = int64_t(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    p.subwords += int64_t(lines[i].size()) + 1;
    p.words += words[i] + 1;
  }
  p.targets.reserve(size_t(p.subwords));
  p.token_nll.reserve(size_t(p.subwords));
  std::vector<size_t> order;  // the lines in the order their predictions were scored
  if (!lines.empty()) {
    if (block == 0) {
      sentence_nll(model, lines, max_tokens, p, &order);
    } else {
      block_nll(model, lines, block, stride, max_tokens, p);
      for (size_t i = 0; i < lines.size(); ++i) order.push_back(i);  // the stream's order
    }
  }
  if (int64_t(p.targets.size()) != p.subwords)
    throw std::logic_error("perplexity: scored " + std::to_string(p.targets.size()) + " predictions, expected " +
                           std::to_string(p.subwords));
  p.line_nll.assign(lines.size(), 0.0);
  p.line_subwords.assign(lines.size(), 0);
  p.line_words.assign(lines.size(), 0);
  size_t at = 0;
  for (size_t line : order) {
    const size_t n = lines[line].size() + 1;
    for (size_t k = 0; k < n; ++k) p.line_nll[line] += double(p.token_nll[at + k]);
    at += n;
    p.line_subwords[line] = int64_t(n);
    p.line_words[line] = words[line] + 1;
  }
  model.train(was_training);
  return p;
}

Perplexity text_perplexity(Transformer& model, const Vocab& vocab, const std::vector<std::string>& lines, int64_t block,
                           int64_t stride, int64_t max_tokens) {
  std::vector<std::vector<int>> ids;
  std::vector<int64_t> words;
  for (const auto& line : lines) {
    ids.push_back(vocab.encode(line));
    std::istringstream in(line);
    std::string w;
    int64_t n = 0;
    while (in >> w) ++n;
    words.push_back(n);
  }
  return lm_perplexity(model, ids, words, block, stride, max_tokens);
}

}  // namespace yoke
