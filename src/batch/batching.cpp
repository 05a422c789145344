#include "batch/batching.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "util/portable_random.h"

namespace yoke {
namespace {

std::vector<uint32_t> length_order(const std::vector<uint32_t>& src_lens,
                                   const std::vector<uint32_t>& tgt_lens, bool shuffle,
                                   std::mt19937_64& rng) {
  const size_t n = src_lens.size();
  std::vector<uint64_t> tie(n);
  for (size_t i = 0; i < n; ++i) tie[i] = shuffle ? rng() : i;
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (src_lens[a] != src_lens[b]) return src_lens[a] < src_lens[b];
    if (tgt_lens[a] != tgt_lens[b]) return tgt_lens[a] < tgt_lens[b];
    if (tie[a] != tie[b]) return tie[a] < tie[b];
    return a < b;
  });
  return order;
}

}  // namespace

size_t batch_cost(size_t n_sentences, size_t max_src, size_t max_tgt) {
  return n_sentences * std::max(max_src, max_tgt);
}

std::vector<std::vector<uint32_t>> make_token_batches(const std::vector<uint32_t>& src_lens,
                                                      const std::vector<uint32_t>& tgt_lens,
                                                      size_t max_tokens, bool shuffle,
                                                      uint64_t seed) {
  if (src_lens.size() != tgt_lens.size())
    throw std::invalid_argument("make_token_batches: " + std::to_string(src_lens.size()) +
                                " source lengths but " + std::to_string(tgt_lens.size()) +
                                " target lengths");
  if (src_lens.size() > UINT32_MAX)
    throw std::invalid_argument("make_token_batches: more than 2^32 sentences");
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> batches;
  std::vector<uint32_t> batch;
  size_t max_src = 0, max_tgt = 0;
  for (uint32_t i : length_order(src_lens, tgt_lens, shuffle, rng)) {
    const size_t s = std::max<size_t>(max_src, src_lens[i]);
    const size_t t = std::max<size_t>(max_tgt, tgt_lens[i]);
    if (!batch.empty() && batch_cost(batch.size() + 1, s, t) > max_tokens) {
      batches.push_back(std::move(batch));
      batch.clear();
      max_src = max_tgt = 0;
    }
    batch.push_back(i);
    max_src = std::max<size_t>(max_src, src_lens[i]);
    max_tgt = std::max<size_t>(max_tgt, tgt_lens[i]);
  }
  if (!batch.empty()) batches.push_back(std::move(batch));
  if (shuffle) shuffle_in_place(batches, rng);
  return batches;
}

}  // namespace yoke
