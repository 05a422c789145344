// Continuing text with a language model: greedy search or sampling with temperature, top-k and
// top-p (nucleus, Holtzman et al. 2020), one token at a time with the key/value cache.
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "model/transformer.h"

namespace yoke {

struct SamplingOptions {
  double temperature = 1.0;  // 0: greedy (argmax)
  int64_t top_k = 0;         // keep the k most likely tokens; 0: all
  double top_p = 1.0;        // keep the smallest set of most likely tokens with mass >= p
  int64_t max_tokens = 100;  // new tokens at most (fewer when eos comes first or positions run out)
  uint64_t seed = 1;         // the same seed, model and options give the same tokens
};

// Picks the next token from logits [V] (float, CPU). Ties go to the lowest id, so top_k = 1
// is greedy search. pad, unk and bos are never picked.
int pick_token(const at::Tensor& logits, const SamplingOptions& o, std::mt19937_64& rng);

// Feeds `context` (start token + prompt ids), then generates until eos or a limit; calls
// `on_token` for every new token as it is produced. Returns the new tokens (without eos).
std::vector<int> generate_tokens(Transformer& model, const std::vector<int>& context, const SamplingOptions& o,
                                 const std::function<void(int)>& on_token = {});

}  // namespace yoke
