#include "decode/constraints.h"

#include <algorithm>
#include <cmath>

namespace yoke {

ConstraintState initial_constraint_state(size_t constraints) {
  ConstraintState s;
  s.met.assign(constraints, false);
  return s;
}

int ConstraintState::tokens_met(const std::vector<std::vector<int>>& constraints) const {
  int n = progress;
  for (size_t c = 0; c < met.size(); ++c)
    if (met[c]) n += int(constraints[c].size());
  return n;
}

bool ConstraintState::all_met() const { return std::all_of(met.begin(), met.end(), [](bool b) { return b; }); }

ConstraintState ConstraintState::after(int token, const std::vector<std::vector<int>>& constraints) const {
  ConstraintState s = *this;
  if (s.current >= 0) {
    const auto& phrase = constraints[size_t(s.current)];
    if (phrase[size_t(s.progress)] == token) {
      if (++s.progress == int(phrase.size())) {
        s.met[size_t(s.current)] = true;
        s.current = -1;
        s.progress = 0;
      }
      return s;
    }
    s.current = -1;  // the phrase is broken off
    s.progress = 0;
  }
  for (size_t c = 0; c < constraints.size(); ++c) {
    if (s.met[c] || constraints[c].front() != token) continue;
    if (constraints[c].size() == 1) {
      s.met[c] = true;
    } else {
      s.current = int(c);
      s.progress = 1;
    }
    break;
  }
  return s;
}

std::vector<int> ConstraintState::wanted(const std::vector<std::vector<int>>& constraints) const {
  if (current >= 0) return {constraints[size_t(current)][size_t(progress)]};
  std::vector<int> out;
  for (size_t c = 0; c < constraints.size(); ++c)
    if (!met[c]) out.push_back(constraints[c].front());
  return out;
}

std::vector<ConstraintCandidate> allocate_beam(std::vector<ConstraintCandidate> candidates, int beam, int total_tokens) {
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                  [](const ConstraintCandidate& c) { return std::isinf(c.score) && c.score < 0; }),
                   candidates.end());
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const ConstraintCandidate& a, const ConstraintCandidate& b) { return a.score > b.score; });
  const int banks = total_tokens + 1, quota = beam / banks;
  std::vector<bool> taken(candidates.size(), false);
  std::vector<ConstraintCandidate> out;
  for (int bank = total_tokens; bank >= 0; --bank) {
    int given = 0;
    for (size_t i = 0; i < candidates.size() && given < quota; ++i)
      if (candidates[i].bank == bank) {
        taken[i] = true;
        out.push_back(candidates[i]);
        ++given;
      }
  }
  for (int bank = total_tokens; bank >= 0 && int(out.size()) < beam; --bank)
    for (size_t i = 0; i < candidates.size() && int(out.size()) < beam; ++i)
      if (!taken[i] && candidates[i].bank == bank) {
        taken[i] = true;
        out.push_back(candidates[i]);
      }
  std::stable_sort(out.begin(), out.end(),
                   [](const ConstraintCandidate& a, const ConstraintCandidate& b) { return a.score > b.score; });
  return out;
}

}  // namespace yoke
