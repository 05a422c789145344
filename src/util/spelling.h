// "Did you mean …?" for misspelt names (config keys, options).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace yoke {

// Levenshtein distance: insertions, deletions and substitutions.
inline size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] != b[j - 1])});
      prev = cur;
    }
  }
  return row[b.size()];
}

// The candidate nearest to `word` within 3 edits, or "" when none is that near.
inline std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = 4;
  for (const auto& c : candidates)
    if (size_t d = edit_distance(word, c); d < best_d) { best_d = d; best = c; }
  return best;
}

}  // namespace yoke
