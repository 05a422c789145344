// Grouping sentence pairs into batches of similar length, bounded by padded token count.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace yoke {

// Padded cost of a batch, as fairseq counts it: sentences x max(longest src, longest tgt).
size_t batch_cost(size_t n_sentences, size_t max_src, size_t max_tgt);

// Batches of pair indices, each pair exactly once. Pairs are sorted by (src_len, tgt_len) so
// that a batch holds similar lengths (little padding), then greedily packed while
// batch_cost <= max_tokens; a pair too long on its own gets a batch of its own.
// With `shuffle`, equal-length pairs are ordered by a seeded random key and the batch order is
// shuffled; the result depends only on the inputs and the seed (same on every platform).
// The caller decides whether lengths include bos/eos.
std::vector<std::vector<uint32_t>> make_token_batches(const std::vector<uint32_t>& src_lens,
                                                      const std::vector<uint32_t>& tgt_lens,
                                                      size_t max_tokens, bool shuffle,
                                                      uint64_t seed);

}  // namespace yoke
