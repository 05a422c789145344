#include "eval/chrf.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>

#include "eval/ngram_counts.h"
#include "eval/unicode_lower.h"

namespace yoke {

namespace {

constexpr int kCharOrder = 6;
constexpr int kMaxWordOrder = 6;
constexpr double kBeta = 2.0;

// n-grams of code points or of word ids; each order is counted in its own map.
using OrderGramCounts = NGramCounts<size_t(std::max(kCharOrder, kMaxWordOrder))>;

template <typename Seq>
OrderGramCounts count_order_ngrams(const Seq& seq, size_t n) {
  OrderGramCounts counts;
  add_ngrams(seq, n, counts);
  return counts;
}

// sacreBLEU's _get_match_statistics: [hyp, ref, match] for one order. Hypothesis n-grams are
// not counted when the reference has none of that order.
void add_match_statistics(const OrderGramCounts& hyp, const OrderGramCounts& ref, std::vector<double>& out) {
  int64_t hyp_count = 0, ref_count = 0, match = 0;
  for (const auto& [gram, count] : hyp) {
    hyp_count += count;
    const auto it = ref.find(gram);
    if (it != ref.end()) match += std::min(count, it->second);
  }
  for (const auto& entry : ref) ref_count += entry.second;
  out.push_back(ref.empty() ? 0.0 : static_cast<double>(hyp_count));
  out.push_back(static_cast<double>(ref_count));
  out.push_back(static_cast<double>(match));
}

std::u32string without_whitespace(const std::u32string& text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text)
    if (!is_python_space(c)) out += c;
  return out;
}

// Python's string.punctuation.
bool is_ascii_punct(char32_t c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}

// sacreBLEU's _remove_punctuation (from Popović's chrF++.py): a word of two or more characters
// loses one punctuation mark, the last one if it is punctuation, else the first, which becomes
// a word of its own. So "(hi)" gives "(hi" and ")".
std::vector<std::u32string> split_words(const std::u32string& text) {
  std::vector<std::u32string> words;
  for (std::u32string& w : split_python_whitespace(text)) {
    if (w.size() > 1 && is_ascii_punct(w.back())) {
      words.push_back(w.substr(0, w.size() - 1));
      words.push_back(w.substr(w.size() - 1));
    } else if (w.size() > 1 && is_ascii_punct(w.front())) {
      words.push_back(w.substr(0, 1));
      words.push_back(w.substr(1));
    } else {
      words.push_back(std::move(w));
    }
  }
  return words;
}

std::vector<uint32_t> to_ids(const std::vector<std::u32string>& words,
                             std::unordered_map<std::u32string, uint32_t>& vocab) {
  std::vector<uint32_t> ids;
  ids.reserve(words.size());
  for (const std::u32string& w : words)
    ids.push_back(vocab.emplace(w, static_cast<uint32_t>(vocab.size())).first->second);
  return ids;
}

void check_word_order(int word_order) {
  if (word_order < 0 || word_order > kMaxWordOrder)
    throw std::invalid_argument("chrF word order must be in 0.." + std::to_string(kMaxWordOrder) +
                                ", got " + std::to_string(word_order));
}

// Mean precision and recall over the orders where both sides have n-grams (0 when none).
std::pair<double, double> average_precision_recall(const std::vector<double>& v) {
  double prec = 0.0, rec = 0.0;
  int effective = 0;
  for (size_t k = 0; k + 2 < v.size(); k += 3) {
    const double n_hyp = v[k], n_ref = v[k + 1], n_match = v[k + 2];
    if (n_hyp > 0 && n_ref > 0) {
      prec += n_match / n_hyp;
      rec += n_match / n_ref;
      ++effective;
    }
  }
  if (effective == 0) return {0.0, 0.0};
  return {prec / effective, rec / effective};
}

}  // namespace

ChrfStats& ChrfStats::operator+=(const ChrfStats& other) {
  if (v.empty()) v.assign(other.v.size(), 0.0);
  if (other.v.empty()) return *this;
  if (other.v.size() != v.size())
    throw std::invalid_argument("ChrfStats: adding statistics of a different word order");
  for (size_t i = 0; i < v.size(); ++i) v[i] += other.v[i];
  return *this;
}

ChrfStats chrf_sentence_stats(const std::string& hyp, const std::string& ref, int word_order,
                              bool lowercase) {
  check_word_order(word_order);
  std::u32string hyp_text = decode_utf8_lossless(hyp), ref_text = decode_utf8_lossless(ref);
  if (lowercase) {
    hyp_text = unicode_lower(hyp_text);
    ref_text = unicode_lower(ref_text);
  }
  ChrfStats stats;
  stats.v.reserve(3 * (kCharOrder + word_order));

  const std::u32string hyp_chars = without_whitespace(hyp_text);
  const std::u32string ref_chars = without_whitespace(ref_text);
  for (size_t n = 1; n <= kCharOrder; ++n)
    add_match_statistics(count_order_ngrams(hyp_chars, n), count_order_ngrams(ref_chars, n), stats.v);

  if (word_order > 0) {
    std::unordered_map<std::u32string, uint32_t> vocab;
    const std::vector<uint32_t> hyp_words = to_ids(split_words(hyp_text), vocab);
    const std::vector<uint32_t> ref_words = to_ids(split_words(ref_text), vocab);
    for (size_t n = 1; n <= static_cast<size_t>(word_order); ++n)
      add_match_statistics(count_order_ngrams(hyp_words, n), count_order_ngrams(ref_words, n), stats.v);
  }
  return stats;
}

double chrf_from_stats(const ChrfStats& stats, int word_order) {
  check_word_order(word_order);
  if (stats.v.empty()) return 0.0;
  if (stats.v.size() != static_cast<size_t>(3 * (kCharOrder + word_order)))
    throw std::invalid_argument("chrf_from_stats: statistics of " +
                                std::to_string(stats.v.size() / 3) + " orders for word order " +
                                std::to_string(word_order));
  const auto [prec, rec] = average_precision_recall(stats.v);
  if (prec + rec == 0.0) return 0.0;
  const double factor = kBeta * kBeta;
  const double score = (1 + factor) * prec * rec / (factor * prec + rec);
  return 100.0 * score;
}

double corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                   int word_order, bool lowercase) {
  if (hyps.size() != refs.size())
    throw std::invalid_argument("corpus_chrf: " + std::to_string(hyps.size()) + " hypotheses but " +
                                std::to_string(refs.size()) + " references");
  ChrfStats total;
  for (size_t i = 0; i < hyps.size(); ++i)
    total += chrf_sentence_stats(hyps[i], refs[i], word_order, lowercase);
  return chrf_from_stats(total, word_order);
}

}  // namespace yoke
