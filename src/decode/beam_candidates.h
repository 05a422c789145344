// The best continuations of each sentence in beam search: over the k rows of a sentence, the m
// best values lp[row, token] + score[row], best first, as flat indices b·V + token. What
// at::topk(m) over (lp + scores).view({n, k·V}) gives, without writing those n·k·V sums and in
// one pass (at::topk over 32k candidates a sentence took longer than the log-softmax before it:
// 1.5 against 1.1 ms a step for 40 sentences at beam 4 and V = 8000, one thread). The sums are
// the same float additions, so the values are at::topk's; equal values come lower index first
// (at::topk leaves their order to its sort). On a GPU it is at::topk on the device.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace yoke {

struct BeamCandidates {
  int64_t per_sentence = 0;       // m
  std::vector<float> values;      // [n × m], best first; −inf where fewer than m are finite
  std::vector<int64_t> index;     // [n × m], b·V + token, b the row within the sentence
};

// Called on the CPU on each row of lp (its V floats, its row number) just before its candidates
// are read: the search normalizes its logits there, a row at a time while the row is in cache,
// instead of all rows first and reading them back from memory.
using PrepareRow = std::function<void(float* row, int64_t index)>;

// lp: [n·k, V] float; scores: n·k row scores (−inf for a dead row). m ≤ k·V. With `prepare`
// (CPU only), lp is what prepare made of it afterwards.
BeamCandidates best_candidates(const at::Tensor& lp, const std::vector<float>& scores, int64_t k, int64_t m,
                               const PrepareRow& prepare = {});

}  // namespace yoke
