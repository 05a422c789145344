// Lexically constrained decoding by dynamic beam allocation (Post & Vilar 2018): a hypothesis
// tracks which target phrases it holds; at each step the candidates are the best continuations
// plus, for every hypothesis, the next token of each phrase it still lacks, and the beam is shared
// among "banks" by the number of constraint tokens met, so that hypotheses that met more
// constraints are kept even when they score lower. Only hypotheses that hold every phrase may end.
// Plain data, no tensors: search.cpp feeds it scores.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace yoke {

// Where one hypothesis stands with a sentence's constraints.
struct ConstraintState {
  std::vector<bool> met;  // one per constraint
  int current = -1;       // a constraint begun but not finished, or -1
  int progress = 0;       // its tokens matched so far
  int tokens_met(const std::vector<std::vector<int>>& constraints) const;
  bool all_met() const;
  // The state after emitting `token`. A begun phrase that the token breaks is dropped (its tokens
  // no longer count), and the token may begin another phrase not yet met.
  ConstraintState after(int token, const std::vector<std::vector<int>>& constraints) const;
  // Tokens that advance a constraint from here: the next of the begun phrase, else the first of
  // every phrase not met.
  std::vector<int> wanted(const std::vector<std::vector<int>>& constraints) const;
};

ConstraintState initial_constraint_state(size_t constraints);

struct ConstraintCandidate {
  int64_t row;    // parent hypothesis (row of the batch)
  int64_t token;
  float score;    // the parent's score plus the token's log-probability
  int bank;       // constraint tokens met after the token
};

// Dynamic beam allocation: up to `beam` candidates, each of the banks 0..total_tokens first
// getting beam / (total_tokens + 1) of its best, the slots left over going to the best remaining,
// highest bank first. Candidates with score -inf are never chosen. Result best score first.
std::vector<ConstraintCandidate> allocate_beam(std::vector<ConstraintCandidate> candidates, int beam, int total_tokens);

}  // namespace yoke
