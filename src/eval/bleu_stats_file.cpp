#include "eval/bleu_stats_file.h"

#include <sstream>

#include "text/corpus.h"
#include "util/error.h"
#include "util/gzip_file.h"

namespace yoke {

void write_bleu_stats(const std::string& path, const std::vector<BleuStats>& stats) {
  std::string text;
  for (const auto& s : stats) {
    text += std::to_string(s.sys_len) + '\t' + std::to_string(s.ref_len);
    for (size_t n = 0; n < 4; ++n) text += '\t' + std::to_string(s.matches[n]) + '\t' + std::to_string(s.totals[n]);
    text += '\n';
  }
  write_gzip_atomically(path, text);
}

std::vector<BleuStats> read_bleu_stats(const std::string& path) {
  std::vector<BleuStats> out;
  const auto lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    BleuStats s;
    in >> s.sys_len >> s.ref_len;
    for (size_t n = 0; n < 4; ++n) in >> s.matches[n] >> s.totals[n];
    std::string rest;
    if (in.fail() || (in >> rest) || s.sys_len < 0 || s.ref_len < 0)
      throw input_error(path, i + 1, "expected 10 counts: hyp_len ref_len m1 t1 m2 t2 m3 t3 m4 t4");
    for (size_t n = 0; n < 4; ++n)
      if (s.matches[n] < 0 || s.matches[n] > s.totals[n])
        throw input_error(path, i + 1, "matches of order " + std::to_string(n + 1) + " exceed the n-grams");
    out.push_back(s);
  }
  return out;
}

std::vector<BleuStats> bleu_stats_of(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                     const std::string& hyp_path, bool lowercase) {
  if (hyps.size() != refs.size())
    throw input_error(hyp_path, 0, "has " + std::to_string(hyps.size()) + " lines for " + std::to_string(refs.size()) +
                                       " references");
  std::vector<BleuStats> out;
  out.reserve(hyps.size());
  for (size_t i = 0; i < hyps.size(); ++i) out.push_back(bleu_sentence_stats(hyps[i], refs[i], lowercase));
  return out;
}

}  // namespace yoke
