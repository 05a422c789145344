// chrF and chrF++ exactly as sacreBLEU 2.6's CHRF with its defaults: character n-grams of order
// 1..6 over the text with whitespace removed, plus (chrF++) word n-grams of order 1..word_order,
// beta = 2, no epsilon smoothing (orders without n-grams on either side are left out).
// Characters are Unicode code points; lowercasing is Python's str.lower().
#pragma once
#include <string>
#include <vector>

namespace yoke {

// Sufficient statistics; sentence statistics add up to corpus statistics. Layout as sacreBLEU's:
// for each order (the 6 character orders, then the word orders) three numbers:
// v[3k] = hypothesis n-grams, v[3k+1] = reference n-grams, v[3k+2] = matched n-grams.
// (The hypothesis count of an order is 0 when the reference has no n-gram of that order.)
struct ChrfStats {
  std::vector<double> v;
  ChrfStats& operator+=(const ChrfStats& other);  // an empty side takes the other's layout
};

// word_order 0 gives chrF, 2 gives chrF++ (at most 6).
ChrfStats chrf_sentence_stats(const std::string& hyp, const std::string& ref, int word_order,
                              bool lowercase);

// The score on sacreBLEU's 0..100 scale: precision and recall averaged over the orders where
// both sides have n-grams, then F-beta of the two averages. Empty statistics score 0; statistics
// of another word order throw std::invalid_argument.
double chrf_from_stats(const ChrfStats& stats, int word_order);

// Corpus chrF(++) of hyps[i] against refs[i]. Throws std::invalid_argument on unequal sizes.
double corpus_chrf(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                   int word_order = 0, bool lowercase = false);

}  // namespace yoke
