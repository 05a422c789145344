#include "eval/sentence_nll_file.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "text/corpus.h"
#include "util/error.h"
#include "util/gzip_file.h"

namespace yoke {

void write_sentence_nll(const std::string& path, const SentenceNll& lines) {
  if (lines.subwords.size() != lines.nll.size() || lines.words.size() != lines.nll.size())
    throw std::invalid_argument("write_sentence_nll: " + path + ": columns of different lengths");
  std::string text;
  char buf[96];
  for (size_t i = 0; i < lines.nll.size(); ++i) {
    // %.17g: the double read back is the one written, so a report recomputes the same perplexity.
    std::snprintf(buf, sizeof buf, "%.17g\t%lld\t%lld\n", lines.nll[i], (long long)lines.subwords[i],
                  (long long)lines.words[i]);
    text += buf;
  }
  write_gzip_atomically(path, text);
}

SentenceNll read_sentence_nll(const std::string& path) {
  SentenceNll out;
  const auto lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    double nll = 0;
    int64_t subwords = 0, words = 0;
    std::string rest;
    in >> nll >> subwords >> words;
    if (in.fail() || (in >> rest)) throw input_error(path, i + 1, "expected three fields: nll subwords words");
    if (!std::isfinite(nll) || nll < 0) throw input_error(path, i + 1, "the NLL must be a finite number ≥ 0");
    if (subwords < 1 || words < 1) throw input_error(path, i + 1, "a line predicts at least its end-of-line");
    out.nll.push_back(nll);
    out.subwords.push_back(double(subwords));
    out.words.push_back(double(words));
  }
  return out;
}

}  // namespace yoke
