// Translation of many sentences as ids: sorted by length into batches (little padding), decoded,
// and returned in input order. Text in and out: decode/translation_service.h.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "decode/search.h"

namespace yoke {

// The one rule for the default size of decoding batches, in source tokens × beam (forced decoding:
// padded target tokens). On the CPU, with a worker per core, batches of 1000–3000 decoded faster
// than larger ones (docs/performance.md, "Decoding workers"); a GPU wants larger ones. Beam search
// on the CPU takes twice greedy's: its rows thin out as sentences finish, and with one worker a
// thread fp32 beam 4 ran 1.035× faster at 4000 than at 2000 (two workers: the same).
constexpr int kCpuBatchTokens = 2000;
constexpr int kCpuBeamBatchTokens = 4000;
constexpr int kGpuBatchTokens = 6000;
int default_batch_tokens(const Transformer& model);  // by the device the model is on: greedy, forced decoding
// By the device and the search: beam search (beam > 1, no sampling) on the CPU takes kCpuBeamBatchTokens.
int default_batch_tokens(const Transformer& model, const SearchOptions& search);

// Called after each batch, one call at a time, with the indices (into the sources) of the
// sentences whose results have just been stored in `results` (streaming output reads them there).
template <class Result>
using ResultsReady = std::function<void(const std::vector<size_t>& indices, const std::vector<Result>& results)>;

// Source id sequences (without eos) → best target ids, in input order. `max_batch_tokens` 0:
// default_batch_tokens(model, opts). `on_batch(done)` reports progress in sentences.
std::vector<std::vector<int>> translate_ids(const Ensemble& model, const std::vector<std::vector<int>>& sources,
                                            const SearchOptions& opts, int max_batch_tokens,
                                            const std::function<void(size_t)>& on_batch = {},
                                            const ResultsReady<std::vector<int>>& on_results = {});

// What translate_ids_nbest may be given besides the sources.
struct TranslateExtras {
  const std::vector<TargetGuide>* guides = nullptr;  // one per source (prefixes, constraints), or none
  size_t first_index = 0;  // input index of sources[0]: a chunk of a stream samples as the whole would
  ResultsReady<std::vector<Hypothesis>> on_results;  // streaming output
};

// As translate_ids, keeping up to `nbest` (≤ opts.beam) hypotheses per source, best first, with
// their scores. The search is beam search even for opts.beam = 1 (it finds greedy's output), or
// one sample per source under opts.sampling.
std::vector<std::vector<Hypothesis>> translate_ids_nbest(const Ensemble& model, const std::vector<std::vector<int>>& sources,
                                                         const SearchOptions& opts, int nbest, int max_batch_tokens,
                                                         const std::function<void(size_t)>& on_batch = {},
                                                         const TranslateExtras& extras = {});

// Greedy search over `sources` with max_len_a/b: validation BLEU tracks progress during
// training, it is not the final score. Has the shape of train()'s ValidationDecoder.
std::vector<std::vector<int>> greedy_validation_decode(Transformer& model, const std::vector<std::vector<int>>& sources,
                                                       double max_len_a, int max_len_b);

}  // namespace yoke
