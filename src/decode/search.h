// Greedy and beam search over a trained Transformer, batched, with cached keys/values.
// Sentences that finish leave the batch, so the work shrinks as decoding goes on.
#pragma once
#include <vector>

#include "model/transformer.h"

namespace yoke {

struct SearchOptions {
  int beam = 5;            // 1 = greedy
  double lenpen = 1.0;     // hypothesis score = log p / length^lenpen (length counts eos)
  double max_len_a = 1.2;  // at most a·source_length + b target tokens
  int max_len_b = 10;
  // Batches decoded at once, each on its own thread, by translate_ids and its kin (CPU only; a
  // search itself ignores it): decode/parallel_batches.h.
  int workers = 1;
};

// src [B, S] (ids + eos, right-padded). Returns the best target ids per row, without eos.
std::vector<std::vector<int>> greedy_search(Transformer& model, const at::Tensor& src, const SearchOptions& opts);
std::vector<std::vector<int>> beam_search(Transformer& model, const at::Tensor& src, const SearchOptions& opts);
inline std::vector<std::vector<int>> search(Transformer& model, const at::Tensor& src, const SearchOptions& opts) {
  return opts.beam <= 1 ? greedy_search(model, src, opts) : beam_search(model, src, opts);
}

// One finished hypothesis of beam search with the model's scores for it.
struct Hypothesis {
  std::vector<int> tokens;  // without eos
  double log_prob = 0;      // log p(tokens, eos | source): the sum over its tokens and eos
  double score = 0;         // what the search ranks by: log_prob / (tokens + 1)^lenpen
};

// Beam search of width opts.beam (1 runs the same search with one hypothesis, which finds what
// greedy search finds) keeping up to `nbest` (at most the beam) finished hypotheses per row,
// best score first. beam_search returns the first of each list.
std::vector<std::vector<Hypothesis>> beam_search_nbest(Transformer& model, const at::Tensor& src,
                                                       const SearchOptions& opts, int nbest);

}  // namespace yoke
