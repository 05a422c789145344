#include "decode/word_alignment.h"

#include <algorithm>
#include <cstdio>

namespace yoke {

std::vector<int> word_of_piece(const std::vector<std::string>& pieces) {
  static const std::string kWordStart = "\xE2\x96\x81";  // U+2581, SentencePiece's word boundary
  std::vector<int> out;
  int word = -1;
  for (const auto& p : pieces) {
    if (word < 0 || p.compare(0, kWordStart.size(), kWordStart) == 0) ++word;
    out.push_back(word);
  }
  return out;
}

std::vector<std::vector<double>> unit_attention(const std::vector<std::vector<float>>& attention,
                                                const std::vector<std::string>& src_pieces,
                                                const std::vector<std::string>& tgt_pieces, bool words) {
  std::vector<int> su(src_pieces.size()), tu(tgt_pieces.size());
  if (words) {
    su = word_of_piece(src_pieces);
    tu = word_of_piece(tgt_pieces);
  } else {
    for (size_t i = 0; i < su.size(); ++i) su[i] = int(i);
    for (size_t j = 0; j < tu.size(); ++j) tu[j] = int(j);
  }
  const size_t ns = su.empty() ? 0 : size_t(su.back() + 1), nt = tu.empty() ? 0 : size_t(tu.back() + 1);
  std::vector<std::vector<double>> m(nt, std::vector<double>(ns, 0.0));
  std::vector<int> pieces_in(nt, 0);
  for (size_t j = 0; j < tu.size() && j < attention.size(); ++j) {
    ++pieces_in[size_t(tu[j])];
    for (size_t i = 0; i < su.size() && i < attention[j].size(); ++i) m[size_t(tu[j])][size_t(su[i])] += attention[j][i];
  }
  for (size_t t = 0; t < nt; ++t)
    for (auto& v : m[t]) v /= std::max(1, pieces_in[t]);
  return m;
}

std::string format_alignment(const std::vector<std::vector<float>>& attention, const std::vector<std::string>& src_pieces,
                             const std::vector<std::string>& tgt_pieces, const AlignmentFormat& format) {
  const auto m = unit_attention(attention, src_pieces, tgt_pieces, format.words);
  std::string out;
  char buf[32];
  for (size_t t = 0; t < m.size(); ++t) {
    if (m[t].empty()) break;  // an empty source: nothing to link to
    if (!out.empty()) out += ' ';
    if (format.soft) {
      for (size_t s = 0; s < m[t].size(); ++s) {
        std::snprintf(buf, sizeof buf, s ? ",%.3f" : "%.3f", m[t][s]);
        out += buf;
      }
    } else {
      const size_t s = size_t(std::max_element(m[t].begin(), m[t].end()) - m[t].begin());
      out += std::to_string(s) + "-" + std::to_string(t);
    }
  }
  return out;
}

}  // namespace yoke
