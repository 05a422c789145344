// n-gram counts over small integer ids (word ids, code points), shared by BLEU and chrF. An n-gram
// is a fixed array of ids padded with 0 after its last item, so that it hashes cheaply (FNV-1a).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace yoke {

template <size_t MaxOrder>
struct NGram {
  std::array<uint32_t, MaxOrder> ids{};
  bool operator==(const NGram& o) const { return ids == o.ids; }
};

template <size_t MaxOrder>
struct NGramHash {
  size_t operator()(const NGram<MaxOrder>& g) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t id : g.ids) h = (h ^ id) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

template <size_t MaxOrder>
using NGramCounts = std::unordered_map<NGram<MaxOrder>, int64_t, NGramHash<MaxOrder>>;

// Adds each n-gram of order n (≤ MaxOrder) of `seq` to `counts`. Orders kept in one map stay
// apart only when no id is 0 (BLEU numbers its words from 1); chrF keeps a map per order.
template <size_t MaxOrder, class Seq>
void add_ngrams(const Seq& seq, size_t n, NGramCounts<MaxOrder>& counts) {
  for (size_t i = 0; i + n <= seq.size(); ++i) {
    NGram<MaxOrder> g;
    for (size_t k = 0; k < n; ++k) g.ids[k] = static_cast<uint32_t>(seq[i + k]);
    ++counts[g];
  }
}

}  // namespace yoke
