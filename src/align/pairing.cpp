#include "align/pairing.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include "align/align_files.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {

namespace {

const char* const kHeader = "source\ttarget\tcategory\tscore";

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("pair_words: " + what);
}

bool skipped(const std::vector<bool>& skip, int id) { return !skip.empty() && skip[id]; }

void validate(const PairingInput& in) {
  require(in.src_freq.size() == in.src_words.size(), "src_freq and src_words differ in size");
  require(in.tgt_freq.size() == in.tgt_words.size(), "tgt_freq and tgt_words differ in size");
  require(in.src_skip.empty() || in.src_skip.size() == in.src_words.size(),
          "src_skip must be empty or match src_words");
  require(in.tgt_skip.empty() || in.tgt_skip.size() == in.tgt_words.size(),
          "tgt_skip must be empty or match tgt_words");
  for (const auto& [x, y, p] : in.align_prob) {
    require(x >= 0 && size_t(x) < in.src_words.size(), "align_prob source id out of range");
    require(y >= 0 && size_t(y) < in.tgt_words.size(), "align_prob target id out of range");
  }
}

// Ids not skipped, by descending frequency, ties by ascending id.
std::vector<int> by_frequency(const std::vector<double>& freq, const std::vector<bool>& skip) {
  std::vector<int> ids;
  for (int id = 0; id < int(freq.size()); ++id)
    if (!skipped(skip, id)) ids.push_back(id);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return freq[a] > freq[b]; });
  return ids;
}

uint64_t pair_key(int x, int y) { return (uint64_t(uint32_t(x)) << 32) | uint32_t(y); }

// A(y|x) for every listed pair (the largest when listed twice).
std::unordered_map<uint64_t, double> score_index(const PairingInput& in) {
  std::unordered_map<uint64_t, double> scores;
  for (const auto& [x, y, p] : in.align_prob) {
    if (std::isnan(p)) continue;
    auto [it, fresh] = scores.emplace(pair_key(x, y), p);
    if (!fresh) it->second = std::max(it->second, p);
  }
  return scores;
}

// Candidates of each source word, best first (descending A, ties by target id).
std::vector<std::vector<std::pair<double, int>>> candidates(const PairingInput& in) {
  std::vector<std::vector<std::pair<double, int>>> lists(in.src_words.size());
  for (const auto& [x, y, p] : in.align_prob)
    if (!std::isnan(p)) lists[x].emplace_back(p, y);
  for (auto& list : lists)
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
  return lists;
}

struct PairingState {
  std::vector<bool> src_taken, tgt_taken;
  std::vector<WordPair> pairs;
  std::unordered_map<uint64_t, double> scores;

  void add(int x, int y, PairCategory category) {
    auto it = scores.find(pair_key(x, y));
    pairs.push_back({x, y, category, it == scores.end() ? 0.0 : it->second});
    src_taken[x] = tgt_taken[y] = true;
  }
};

// lm (eq. 1 of the seed): frequent source words choose first; a taken target is no candidate.
void pair_lexical(const PairingInput& in, const std::vector<int>& src_order, PairingState& st) {
  const auto lists = candidates(in);
  for (int x : src_order) {
    for (const auto& [p, y] : lists[x]) {
      if (st.tgt_taken[y] || skipped(in.tgt_skip, y)) continue;
      if (p >= in.threshold) st.add(x, y, PairCategory::lm);
      break;  // only the best free candidate counts
    }
  }
}

// wf: identical strings; each form occurs once per vocabulary, so this is one-to-one.
void pair_same_form(const PairingInput& in, const std::vector<int>& src_order, PairingState& st) {
  std::unordered_map<std::string, int> free_targets;
  for (int y = 0; y < int(in.tgt_words.size()); ++y)
    if (!st.tgt_taken[y] && !skipped(in.tgt_skip, y)) free_targets.emplace(in.tgt_words[y], y);
  for (int x : src_order) {
    if (st.src_taken[x]) continue;
    auto it = free_targets.find(in.src_words[x]);
    if (it == free_targets.end() || st.tgt_taken[it->second]) continue;
    st.add(x, it->second, PairCategory::wf);
  }
}

// ur: what is left on both sides, zipped by frequency rank.
void pair_unrelated(const std::vector<int>& src_order, const std::vector<int>& tgt_order,
                    PairingState& st) {
  std::vector<int> src_left, tgt_left;
  for (int x : src_order)
    if (!st.src_taken[x]) src_left.push_back(x);
  for (int y : tgt_order)
    if (!st.tgt_taken[y]) tgt_left.push_back(y);
  for (size_t r = 0; r < std::min(src_left.size(), tgt_left.size()); ++r)
    st.add(src_left[r], tgt_left[r], PairCategory::ur);
}

}  // namespace

const char* category_name(PairCategory category) {
  switch (category) {
    case PairCategory::lm: return "lm";
    case PairCategory::wf: return "wf";
    case PairCategory::ur: return "ur";
  }
  return "?";
}

std::vector<WordPair> pair_words(const PairingInput& in) {
  validate(in);
  PairingState st;
  st.src_taken.assign(in.src_words.size(), false);
  st.tgt_taken.assign(in.tgt_words.size(), false);
  st.scores = score_index(in);
  const auto src_order = by_frequency(in.src_freq, in.src_skip);
  const auto tgt_order = by_frequency(in.tgt_freq, in.tgt_skip);
  pair_lexical(in, src_order, st);
  pair_same_form(in, src_order, st);
  pair_unrelated(src_order, tgt_order, st);
  return st.pairs;
}

PairingCounts count_pairs(const std::vector<WordPair>& pairs, size_t src_vocab, size_t tgt_vocab) {
  PairingCounts c{0, 0, 0, src_vocab, tgt_vocab};
  for (const auto& p : pairs) {
    if (p.category == PairCategory::lm) ++c.lm;
    if (p.category == PairCategory::wf) ++c.wf;
    if (p.category == PairCategory::ur) ++c.ur;
  }
  c.src_unpaired -= std::min(src_vocab, pairs.size());
  c.tgt_unpaired -= std::min(tgt_vocab, pairs.size());
  return c;
}

namespace {

// Shortest %g form that reads back to the same double: readable and exact.
std::string format_score(double value) {
  char buffer[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

void check_writable(const std::string& word) {
  if (word.find_first_of("\t\n\r") != std::string::npos)
    throw std::invalid_argument("write_pairs: word contains a tab or newline: '" + word + "'");
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t begin = 0;
  for (size_t tab; (tab = line.find('\t', begin)) != std::string::npos; begin = tab + 1)
    fields.push_back(line.substr(begin, tab - begin));
  fields.push_back(line.substr(begin));
  return fields;
}

std::unordered_map<std::string, int> word_index(const std::vector<std::string>& words) {
  std::unordered_map<std::string, int> index;
  for (int id = 0; id < int(words.size()); ++id) index.emplace(words[id], id);
  return index;
}

PairCategory parse_category(const std::string& text, const std::string& path, size_t line) {
  if (text == "lm") return PairCategory::lm;
  if (text == "wf") return PairCategory::wf;
  if (text == "ur") return PairCategory::ur;
  throw input_error(path, line, "unknown category '" + text + "' (expected lm, wf or ur)");
}

double parse_score(const std::string& text, const std::string& path, size_t line) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || std::isnan(value))
    throw input_error(path, line, "bad score '" + text + "'");
  return value;
}

int parse_word(const std::unordered_map<std::string, int>& index, const std::string& word,
               const char* side, const std::string& path, size_t line) {
  auto it = index.find(word);
  if (it == index.end())
    throw input_error(path, line, std::string("unknown ") + side + " word '" + word + "'");
  return it->second;
}

}  // namespace

void write_pairs(const std::string& path, const std::vector<WordPair>& pairs,
                 const PairingInput& input) {
  for (const auto& p : pairs) {
    if (p.src_id < 0 || size_t(p.src_id) >= input.src_words.size() || p.tgt_id < 0 ||
        size_t(p.tgt_id) >= input.tgt_words.size())
      throw std::invalid_argument("write_pairs: pair id out of vocabulary range");
    check_writable(input.src_words[p.src_id]);
    check_writable(input.tgt_words[p.tgt_id]);
  }
  write_file_atomically(path, [&](std::ostream& out) {
    out << kHeader << '\n';
    for (const auto& p : pairs)
      out << input.src_words[p.src_id] << '\t' << input.tgt_words[p.tgt_id] << '\t'
          << category_name(p.category) << '\t' << format_score(p.score) << '\n';
  });
}

std::vector<WordPair> read_pairs(const std::string& path, const PairingInput& vocab_only) {
  require_regular_file(path, "pair file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, 0, "cannot open for reading");
  const auto src_index = word_index(vocab_only.src_words);
  const auto tgt_index = word_index(vocab_only.tgt_words);
  std::vector<bool> src_seen(vocab_only.src_words.size()), tgt_seen(vocab_only.tgt_words.size());
  std::vector<WordPair> pairs;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number == 1) {
      if (line != kHeader) throw input_error(path, 1, "expected the header '" +
                                                          std::string(kHeader) + "'");
      continue;
    }
    const auto fields = split_tabs(line);
    if (fields.size() != 4)
      throw input_error(path, number, "expected 4 tab-separated fields, found " +
                                          std::to_string(fields.size()));
    WordPair p{parse_word(src_index, fields[0], "source", path, number),
               parse_word(tgt_index, fields[1], "target", path, number),
               parse_category(fields[2], path, number), parse_score(fields[3], path, number)};
    if (src_seen[p.src_id] || tgt_seen[p.tgt_id])
      throw input_error(path, number, "word paired twice: '" + fields[0] + "' / '" + fields[1] + "'");
    src_seen[p.src_id] = tgt_seen[p.tgt_id] = true;
    pairs.push_back(p);
  }
  if (number == 0) throw input_error(path, 0, "empty file (no header)");
  return pairs;
}

}  // namespace yoke
