// Translation of many sentences as ids: sorted by length into batches (little padding), decoded,
// and returned in input order. Text in and out: decode/text_io.h.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "decode/search.h"

namespace yoke {

// The one rule for the default size of decoding batches, in source tokens × beam (forced decoding:
// padded target tokens). On the CPU, with a worker per core, batches of 1000–3000 decoded faster
// than larger ones (docs/performance.md, "Decoding workers"); a GPU wants larger ones.
constexpr int kCpuBatchTokens = 2000;
constexpr int kGpuBatchTokens = 6000;
int default_batch_tokens(const Transformer& model);  // by the device the model is on

// Source id sequences (without eos) → best target ids, in input order.
// `on_batch(done)` reports progress in sentences.
std::vector<std::vector<int>> translate_ids(Transformer& model, const std::vector<std::vector<int>>& sources,
                                            const SearchOptions& opts, int max_batch_tokens,
                                            const std::function<void(size_t)>& on_batch = {});

// As translate_ids, keeping up to `nbest` (≤ opts.beam) hypotheses per source, best first, with
// their scores. The search is beam search even for opts.beam = 1 (it finds greedy's output).
std::vector<std::vector<Hypothesis>> translate_ids_nbest(Transformer& model, const std::vector<std::vector<int>>& sources,
                                                         const SearchOptions& opts, int nbest, int max_batch_tokens,
                                                         const std::function<void(size_t)>& on_batch = {});

// Greedy search over `sources` with max_len_a/b: validation BLEU tracks progress during
// training, it is not the final score. Has the shape of train()'s ValidationDecoder.
std::vector<std::vector<int>> greedy_validation_decode(Transformer& model, const std::vector<std::vector<int>>& sources,
                                                       double max_len_a, int max_len_b);

}  // namespace yoke
