// Corpus BLEU exactly as sacreBLEU 2.6 computes it with its defaults: 13a tokenization,
// n-gram order 4, exponential smoothing, no effective order, one reference per sentence.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

// Sufficient statistics of BLEU; sentence statistics add up to corpus statistics.
struct BleuStats {
  std::array<int64_t, 4> matches{}, totals{};  // clipped matches / hypothesis n-grams, n = 1..4
  int64_t sys_len = 0, ref_len = 0;            // tokens in hypothesis / reference
  BleuStats& operator+=(const BleuStats& other);
};

// Statistics of one sentence pair given as raw text; lowercases (Python str.lower()) when asked,
// then strips trailing whitespace and tokenizes with 13a, as sacreBLEU does.
BleuStats bleu_sentence_stats(const std::string& hyp, const std::string& ref, bool lowercase);

// All on sacreBLEU's scale: score and precisions in 0..100.
struct BleuScore {
  double score;
  std::array<double, 4> precisions;  // smoothed where there were no matches
  double bp;                         // brevity penalty
  int64_t sys_len, ref_len;
};

// sacreBLEU's compute_bleu with smooth_method='exp': an order n with matches has precision
// 100·m/t; the k-th order without matches (counting from the lowest) gets 100 / (2^k · t).
// An order with no hypothesis n-grams at all (t = 0) and every order after it keeps precision 0,
// which makes the score 0 (sacreBLEU's log(0) stand-in); so does a corpus with no matches.
BleuScore bleu_from_stats(const BleuStats& stats);

// Corpus BLEU of hyps[i] against refs[i]. Throws std::invalid_argument on unequal sizes.
BleuScore corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                      bool lowercase = false);

}  // namespace yoke
