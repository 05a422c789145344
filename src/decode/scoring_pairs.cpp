#include "decode/scoring_pairs.h"

#include <cmath>
#include <cstdio>

#include "util/error.h"

namespace yoke {
namespace {

std::vector<int> encode_checked(const Transformer& model, const Vocab& vocab, const std::string& line,
                                const std::string& name, size_t line_no, const char* side) {
  auto ids = vocab.encode(line);
  const size_t limit = size_t(model.spec().max_positions) - 1;
  if (ids.size() > limit)
    throw InputError(name + ":" + std::to_string(line_no) + ": the " + side + " has " + std::to_string(ids.size()) +
                     " subwords; the model has " + std::to_string(limit) + " positions, so it cannot be scored");
  return ids;
}

}  // namespace

ScoringPairs encode_scoring_pairs(const Transformer& model, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                  const std::vector<std::string>& src_lines, const std::string& src_name,
                                  const std::vector<std::string>& tgt_lines, const std::string& tgt_name) {
  if (src_lines.size() != tgt_lines.size())
    throw InputError(src_name + " has " + std::to_string(src_lines.size()) + " lines but " + tgt_name + " has " +
                     std::to_string(tgt_lines.size()) + "; scoring pairs them line by line");
  ScoringPairs p;
  for (size_t i = 0; i < src_lines.size(); ++i) {
    p.sources.push_back(encode_checked(model, src_vocab, src_lines[i], src_name, i + 1, "source"));
    p.targets.push_back(encode_checked(model, tgt_vocab, tgt_lines[i], tgt_name, i + 1, "target"));
  }
  p.target_lines = tgt_lines;
  return p;
}

ScoringPairs encode_nbest_pairs(const Transformer& model, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                const std::vector<std::string>& src_lines, const std::string& src_name,
                                const std::vector<std::string>& nbest_lines, const std::string& nbest_name) {
  ScoringPairs p;
  std::vector<std::vector<int>> encoded(src_lines.size());
  std::vector<bool> done(src_lines.size(), false);
  for (size_t i = 0; i < nbest_lines.size(); ++i) {
    const std::string& line = nbest_lines[i];
    const std::string where = nbest_name + ":" + std::to_string(i + 1) + ": ";
    const size_t bar = line.find(" ||| ");
    if (bar == std::string::npos) throw InputError(where + "expected INDEX ||| TEXT ||| …, found no ' ||| '");
    size_t used = 0;
    long long index = -1;
    try {
      index = std::stoll(line.substr(0, bar), &used);
    } catch (...) { used = 0; }
    if (used == 0 || used != bar || index < 0 || size_t(index) >= src_lines.size())
      throw InputError(where + "'" + line.substr(0, bar) + "' is not a line index of " + src_name + " (0 to " +
                       std::to_string(long(src_lines.size()) - 1) + ")");
    const size_t text_end = line.find(" ||| ", bar + 5);
    const std::string text = line.substr(bar + 5, text_end == std::string::npos ? std::string::npos : text_end - bar - 5);
    if (!done[size_t(index)]) {
      encoded[size_t(index)] = encode_checked(model, src_vocab, src_lines[size_t(index)], src_name, size_t(index) + 1, "source");
      done[size_t(index)] = true;
    }
    p.sources.push_back(encoded[size_t(index)]);
    p.targets.push_back(encode_checked(model, tgt_vocab, text, nbest_name, i + 1, "hypothesis"));
    p.target_lines.push_back(line);
  }
  return p;
}

std::string format_score(double score) {
  if (!std::isfinite(score)) return score < 0 ? "-inf" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", score);
  return buf;
}

}  // namespace yoke
