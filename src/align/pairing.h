// Shared-private word pairing (Liu et al. 2019, §2.1): each source word shares features with at
// most one target word, and vice versa, chosen first by lexical meaning (lm: the aligner's
// A(y|x)), then by identical word form (wf), then by frequency rank among the rest (ur).
#pragma once
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

namespace yoke {

enum class PairCategory { lm, wf, ur };

const char* category_name(PairCategory category);  // "lm", "wf", "ur"

struct WordPair {
  int src_id;
  int tgt_id;
  PairCategory category;
  double score;  // A(tgt|src) from align_prob for every category; 0 when the aligner gave none
};

struct PairingInput {
  std::vector<std::string> src_words, tgt_words;  // vocabulary entries, index = id
  std::vector<double> src_freq, tgt_freq;         // corpus counts per id
  std::vector<std::tuple<int, int, double>> align_prob;  // (src_id, tgt_id, A(y|x))
  std::vector<bool> src_skip, tgt_skip;  // never paired (pad/unk/bos/eos); empty = none skipped
  double threshold = 0.05;               // minimum A(y|x) for an lm pair
};

// Pairs in the order lm, wf, ur (within a category: lm by descending source frequency, wf and ur
// likewise); one-to-one. Frequency ties are broken by the smaller id, probability ties by the
// smaller target id. Throws std::invalid_argument for inconsistent sizes or ids out of range.
std::vector<WordPair> pair_words(const PairingInput& input);

struct PairingCounts {
  size_t lm, wf, ur, src_unpaired, tgt_unpaired;
};

PairingCounts count_pairs(const std::vector<WordPair>& pairs, size_t src_vocab, size_t tgt_vocab);

// TSV with a header `source<TAB>target<TAB>category<TAB>score`, one pair per line, in order.
// Replaces path atomically.
void write_pairs(const std::string& path, const std::vector<WordPair>& pairs,
                 const PairingInput& input);

// Reads what write_pairs wrote; only the word lists of `vocab_only` are used (to map words back
// to ids). Throws InputError (with the line) for malformed lines, unknown words, unknown
// categories, bad scores or a word paired twice.
std::vector<WordPair> read_pairs(const std::string& path, const PairingInput& vocab_only);

}  // namespace yoke
