// Sampling instead of search (SearchOptions::sampling, fairseq's --sampling): the step of
// sample_search (decode/search.h) that draws each row's next token. A sentence's draws depend only
// on the seed and its index in the input, so they repeat whatever the batching.
#pragma once
#include <cstdint>
#include <random>

#include "decode/search.h"

namespace yoke {

class TokenSampler {
 public:
  explicit TokenSampler(const SearchOptions& o) : o_(o) {}
  // A sentence's own random numbers: the same for the same seed and input index in any batch.
  static std::mt19937_64 rng_for(uint64_t seed, size_t index);
  // This step's candidates of every row of log_probs [rows, V] (CPU), best first with their
  // probabilities after dividing by the temperature: the top k, or every token (top p).
  void rank(const at::Tensor& log_probs);
  // Row r's draw: from the top k, or from the smallest set holding top p of the probability.
  int64_t draw(int64_t row, std::mt19937_64& rng) const;

 private:
  const SearchOptions& o_;
  at::Tensor probs_, ids_;
  int64_t width_ = 0;
};

}  // namespace yoke
