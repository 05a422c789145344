// Translation of many sentences: sorted by length into batches (little padding), decoded,
// and returned in input order.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "decode/search.h"
#include "text/vocab.h"

namespace yoke {

// Source tokens × beam per batch when decoding on the CPU: with a worker per core, batches of
// 1000–3000 decoded faster than larger ones (docs/performance.md, "Decoding workers").
constexpr int kCpuBatchTokens = 2000;

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

// Source ids of raw text lines; a line longer than the model's source positions is cut to fit
// and its 0-based index goes to `cut` (when given).
std::vector<std::vector<int>> encode_sources(const Transformer& model, const Vocab& src_vocab,
                                             const std::vector<std::string>& lines, std::vector<size_t>* cut = nullptr);

// Greedy search over `sources` with max_len_a/b: validation BLEU tracks progress during
// training, it is not the final score. Has the shape of train()'s ValidationDecoder.
std::vector<std::vector<int>> greedy_validation_decode(Transformer& model, const std::vector<std::vector<int>>& sources,
                                                       double max_len_a, int max_len_b);

// Raw text in, detokenized text out. A source longer than the model's positions is cut to fit;
// `cut` (when given) receives the 0-based index of each such line.
std::vector<std::string> translate_text(Transformer& model, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                        const std::vector<std::string>& lines, const SearchOptions& opts,
                                        int max_batch_tokens, const std::function<void(size_t)>& on_batch = {},
                                        std::vector<size_t>* cut = nullptr);

}  // namespace yoke
