#include "eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "eval/ngram_counts.h"
#include "eval/tokenize_13a.h"
#include "eval/unicode_lower.h"

namespace yoke {

namespace {

constexpr int kMaxOrder = 4;

// sacreBLEU's pre-processing of a segment: optional lowercasing, rstrip, 13a.
std::string preprocess(const std::string& sent, bool lowercase) {
  return tokenize_13a(rstrip_python_whitespace(lowercase ? unicode_lower(sent) : sent));
}

// Tokens of 13a output, which separates them by single spaces.
std::vector<std::string_view> split_tokens(const std::string& tokenized) {
  std::vector<std::string_view> tokens;
  size_t start = 0;
  while (start < tokenized.size()) {
    size_t end = tokenized.find(' ', start);
    if (end == std::string::npos) end = tokenized.size();
    if (end > start) tokens.emplace_back(tokenized.data() + start, end - start);
    start = end + 1;
  }
  return tokens;
}

// n-grams of token ids, shared between a hypothesis and its reference; ids start at 1, so that
// the four orders can share one map.
using Gram = NGram<kMaxOrder>;
using GramCounts = NGramCounts<kMaxOrder>;

std::vector<uint32_t> to_ids(const std::vector<std::string_view>& tokens,
                             std::unordered_map<std::string_view, uint32_t>& vocab) {
  std::vector<uint32_t> ids;
  ids.reserve(tokens.size());
  for (std::string_view t : tokens)
    ids.push_back(vocab.emplace(t, static_cast<uint32_t>(vocab.size() + 1)).first->second);
  return ids;
}

// Counts of all n-grams of orders 1..4.
GramCounts count_ngrams(const std::vector<uint32_t>& ids) {
  GramCounts counts;
  for (size_t n = 1; n <= kMaxOrder; ++n) add_ngrams(ids, n, counts);
  return counts;
}

size_t order_of(const Gram& g) {
  size_t n = 0;
  while (n < kMaxOrder && g.ids[n] != 0) ++n;
  return n;
}

// sacreBLEU's my_log: log(0) is replaced by a huge negative number instead of -inf.
double safe_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

double brevity_penalty(int64_t sys_len, int64_t ref_len) {
  if (sys_len >= ref_len) return 1.0;
  if (sys_len == 0) return 0.0;
  return std::exp(1.0 - static_cast<double>(ref_len) / static_cast<double>(sys_len));
}

// Precisions with 'exp' smoothing; stops at the first order without hypothesis n-grams.
std::array<double, 4> smoothed_precisions(const BleuStats& s) {
  std::array<double, 4> p{};
  double smooth = 1.0;
  for (int n = 0; n < kMaxOrder; ++n) {
    if (s.totals[n] == 0) break;
    const double total = static_cast<double>(s.totals[n]);
    if (s.matches[n] == 0) {
      smooth *= 2;
      p[n] = 100.0 / (smooth * total);
    } else {
      p[n] = 100.0 * static_cast<double>(s.matches[n]) / total;
    }
  }
  return p;
}

}  // namespace

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  for (int n = 0; n < kMaxOrder; ++n) {
    matches[n] += other.matches[n];
    totals[n] += other.totals[n];
  }
  sys_len += other.sys_len;
  ref_len += other.ref_len;
  return *this;
}

BleuStats bleu_sentence_stats(const std::string& hyp, const std::string& ref, bool lowercase) {
  const std::string hyp_tok = preprocess(hyp, lowercase);
  const std::string ref_tok = preprocess(ref, lowercase);
  std::unordered_map<std::string_view, uint32_t> vocab;
  const std::vector<uint32_t> hyp_ids = to_ids(split_tokens(hyp_tok), vocab);
  const std::vector<uint32_t> ref_ids = to_ids(split_tokens(ref_tok), vocab);

  BleuStats s;
  s.sys_len = static_cast<int64_t>(hyp_ids.size());
  s.ref_len = static_cast<int64_t>(ref_ids.size());
  const GramCounts ref_counts = count_ngrams(ref_ids);
  for (const auto& [gram, count] : count_ngrams(hyp_ids)) {
    const size_t n = order_of(gram) - 1;
    s.totals[n] += count;
    const auto it = ref_counts.find(gram);
    if (it != ref_counts.end()) s.matches[n] += std::min(count, it->second);
  }
  return s;
}

BleuScore bleu_from_stats(const BleuStats& stats) {
  BleuScore r{0.0, {}, brevity_penalty(stats.sys_len, stats.ref_len), stats.sys_len, stats.ref_len};
  bool any_match = false;
  for (int64_t m : stats.matches) any_match = any_match || m > 0;
  if (!any_match) return r;  // sacreBLEU stops early: score 0, precisions 0

  r.precisions = smoothed_precisions(stats);
  double log_sum = 0.0;
  for (double p : r.precisions) log_sum += safe_log(p);
  r.score = r.bp * std::exp(log_sum / kMaxOrder);
  return r;
}

BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                      bool lowercase) {
  if (hyps.size() != refs.size())
    throw std::invalid_argument("corpus_bleu: " + std::to_string(hyps.size()) + " hypotheses but " +
                                std::to_string(refs.size()) + " references");
  BleuStats total;
  for (size_t i = 0; i < hyps.size(); ++i)
    total += bleu_sentence_stats(hyps[i], refs[i], lowercase);
  return bleu_from_stats(total);
}

}  // namespace yoke
