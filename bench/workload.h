// Fixed training workloads for the benchmarks: random sentence pairs shaped like Multi30k
// (lengths 8–24 subwords), cut into batches of about `tokens_per_side` tokens per side, the
// same for every run with the same seed.
#pragma once
#include <random>
#include <vector>

#include "batch/batch.h"
#include "text/vocab.h"

namespace yoke::bench {

inline std::vector<Batch> synthetic_batches(int count, int64_t tokens_per_side, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> len(8, 24), word(4, vocab - 1);
  std::vector<Batch> out;
  for (int b = 0; b < count; ++b) {
    std::vector<std::vector<int64_t>> src, tgt;
    int64_t n_src = 0;
    while (n_src < tokens_per_side) {
      src.emplace_back(size_t(len(rng)));
      tgt.emplace_back(size_t(len(rng)));
      for (auto* s : {&src.back(), &tgt.back()}) for (auto& w : *s) w = word(rng);
      n_src += int64_t(src.back().size()) + 1;
    }
    const int64_t rows = int64_t(src.size());
    size_t s_max = 0, t_max = 0;
    for (size_t i = 0; i < src.size(); ++i) { s_max = std::max(s_max, src[i].size()); t_max = std::max(t_max, tgt[i].size()); }
    Batch batch;
    batch.src = at::zeros({rows, int64_t(s_max) + 1}, at::kLong);
    batch.tgt_in = at::zeros({rows, int64_t(t_max) + 1}, at::kLong);
    batch.tgt_out = at::zeros({rows, int64_t(t_max) + 1}, at::kLong);
    auto ps = batch.src.accessor<int64_t, 2>(), pi = batch.tgt_in.accessor<int64_t, 2>(), po = batch.tgt_out.accessor<int64_t, 2>();
    for (int64_t i = 0; i < rows; ++i) {
      const auto& s = src[size_t(i)];
      const auto& t = tgt[size_t(i)];
      for (size_t j = 0; j < s.size(); ++j) ps[i][int64_t(j)] = s[j];
      ps[i][int64_t(s.size())] = Vocab::eos;
      pi[i][0] = Vocab::bos;
      for (size_t j = 0; j < t.size(); ++j) { pi[i][int64_t(j) + 1] = t[j]; po[i][int64_t(j)] = t[j]; }
      po[i][int64_t(t.size())] = Vocab::eos;
      batch.src_tokens += int64_t(s.size()) + 1;
      batch.tgt_tokens += int64_t(t.size()) + 1;
    }
    out.push_back(std::move(batch));
  }
  return out;
}

}  // namespace yoke::bench
