// Forced decoding (teacher forcing): the model's log-probability of given target sentences, per
// token and per sentence, as Marian's scorer and fairseq's --score-reference report it. Used to
// rerank n-best lists and to filter parallel data. Scores agree with those beam search reports
// for its own outputs: both are log-softmax over the whole vocabulary, with eos counted.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

#include "decode/search.h"

namespace yoke {

struct ForcedScore {
  std::vector<float> token_log_probs;  // one per target token, then one for eos
  double log_prob = 0;                 // their sum: log p(target, eos | source)
  double score = 0;                    // log_prob / (target tokens + 1)^lenpen, as beam search ranks
};

// sources[i] and targets[i] are id sequences without eos. Batched by length under
// `max_batch_tokens` (padded target tokens per batch); results in input order. A target whose
// length + 1 exceeds the model's positions cannot be scored: throws InputError naming its index.
// An ensemble scores with the weighted mean of its models' log-probabilities, as its search does.
// Batches go through decoding's one loop (batch_loop.h) on `workers` threads on the CPU.
std::vector<ForcedScore> force_decode(const Ensemble& model, const std::vector<std::vector<int>>& sources,
                                      const std::vector<std::vector<int>>& targets, double lenpen,
                                      int max_batch_tokens, const std::function<void(size_t)>& on_batch = {},
                                      int workers = 1);

}  // namespace yoke
