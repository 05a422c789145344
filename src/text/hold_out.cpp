#include "text/hold_out.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>

#include "text/corpus.h"
#include "util/error.h"
#include "util/portable_random.h"

namespace yoke {

HeldOutPairs draw_held_out(const std::string& src_path, const std::string& tgt_path, uint64_t n, uint64_t seed) {
  const bool lm = src_path.empty();
  std::unique_ptr<PairReader> pairs;
  std::unique_ptr<LineReader> lines;
  if (lm) lines = std::make_unique<LineReader>(tgt_path);
  else pairs = std::make_unique<PairReader>(src_path, tgt_path);
  // Algorithm R: the first n pairs fill the reservoir; pair i > n replaces a random slot with
  // probability n / (i + 1). Every n-subset is equally likely.
  std::mt19937_64 rng(seed);
  HeldOutPairs r;
  std::string src, tgt;
  for (;;) {
    const bool got = lm ? lines->next(tgt) : pairs->next(src, tgt);
    if (!got) break;
    if ((!lm && is_blank(src)) || is_blank(tgt)) continue;
    const uint64_t i = r.pairs_seen++;
    size_t slot = r.index.size();
    if (i >= n) {
      const uint64_t j = uniform_below(rng, i + 1);
      if (j >= n) continue;
      slot = size_t(j);
    } else {
      r.index.emplace_back();
      r.src.emplace_back();
      r.tgt.emplace_back();
    }
    r.index[slot] = i;
    r.src[slot] = lm ? std::string() : src;
    r.tgt[slot] = tgt;
  }
  if (r.pairs_seen <= n)
    throw input_error(lm ? tgt_path : src_path, 0,
                      "--hold-out asks for " + std::to_string(n) + " pairs, and the training text has " +
                          std::to_string(r.pairs_seen) + " non-blank ones: nothing would be left to train on");
  // File order, so that the test set reads as the corpus does.
  std::vector<size_t> order(r.index.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.index[a] < r.index[b]; });
  HeldOutPairs sorted;
  sorted.pairs_seen = r.pairs_seen;
  for (size_t k : order) {
    sorted.index.push_back(r.index[k]);
    sorted.src.push_back(std::move(r.src[k]));
    sorted.tgt.push_back(std::move(r.tgt[k]));
  }
  return sorted;
}

HeldOutFilter::HeldOutFilter(const HeldOutPairs& held)
    : index_(held.index), src_(held.src.begin(), held.src.end()), tgt_(held.tgt.begin(), held.tgt.end()) {
  src_.erase(std::string());  // a language model's pairs have no source side
}

bool HeldOutFilter::excluded(const std::string& src, const std::string& tgt) {
  const uint64_t i = position_++;
  if (next_ < index_.size() && index_[next_] == i) {
    ++next_;
    return true;
  }
  if (index_.empty()) return false;
  if ((!src.empty() && src_.count(src)) || tgt_.count(tgt)) {
    ++overlapping_;
    return true;
  }
  return false;
}

}  // namespace yoke
