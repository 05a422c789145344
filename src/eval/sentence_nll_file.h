// A language model's likelihood of every line of a test text, as a file: what a report needs to
// count the test set's noise in a perplexity comparison (eval/test_set_covariance.h), without the
// model. One line per text line, tab-separated:
//   nll subwords words
// (nll: the summed negative log-likelihood in nats of the line's predictions, its end-of-line
// included; subwords and words: how many predictions each perplexity divides by). Written gzipped.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

struct SentenceNll {
  std::vector<double> nll;
  std::vector<double> subwords, words;  // counts, as doubles for the covariance's arithmetic
};

void write_sentence_nll(const std::string& path, const SentenceNll& lines);

// Throws InputError naming the file and line of a malformed line.
SentenceNll read_sentence_nll(const std::string& path);

}  // namespace yoke
