// Encoding a corpus word by word through a cache: how `yoke prepare` encodes millions of lines.
//
// Why it is exact: yoke's vocabularies are trained with SentencePiece's split_by_whitespace (the
// default), so no piece spans a space, and the normalizer (nmt_nfkc, with dummy prefix and extra
// whitespace removed) maps each space-separated word on its own as it does inside its sentence.
// A sentence's ids are therefore its words' ids, each word encoded alone, concatenated. Corpus
// text is Zipfian, so most words are found in the cache: several times faster than encoding
// every sentence with SentencePiece. Tests check the equality on every Multi30k sentence and on
// text chosen to break it (tabs, no-break spaces, combining marks, unknown characters).
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/vocab.h"

namespace yoke {

class WordCacheEncoder {
 public:
  // Holds at most `max_words` words (then starts over): bounded memory on any corpus.
  explicit WordCacheEncoder(const Vocab& vocab, size_t max_words = 1 << 18) : vocab_(vocab), max_words_(max_words) {}
  // The ids Vocab::encode gives for `sentence`, appended to `ids` (cleared first).
  void encode(const std::string& sentence, std::vector<int>& ids);
  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }

 private:
  const Vocab& vocab_;
  size_t max_words_;
  std::unordered_map<std::string, std::vector<int>> cache_;
  std::string word_;
  size_t hits_ = 0, misses_ = 0;
};

}  // namespace yoke
