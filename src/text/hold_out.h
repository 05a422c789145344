// `yoke prepare --hold-out NAME:N`: N training pairs drawn at random (reproducibly, from
// --hold-out-seed) and kept out of training, to serve as a test set from the training
// distribution. The draw is over the pairs with no blank side, numbered in file order (blank
// pairs are skipped before numbering, in every pass that reads the text): one reservoir pass
// (Algorithm R, Vitter 1985, with portable draws) picks them, holding only the N pairs drawn.
// A held-out pair never reaches the vocabulary or the training corpus; neither does any other
// training pair that shares its source or its target sentence, so no test sentence is seen in
// training (Multi30k repeats some captions word for word).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace yoke {

struct HeldOutPairs {
  std::vector<uint64_t> index;        // the drawn pairs' numbers among non-blank pairs, ascending
  std::vector<std::string> src, tgt;  // their text, in that order (src empty for a language model)
  uint64_t pairs_seen = 0;            // non-blank pairs in the training text
};

// Reads the training text once (src_path empty: one monolingual text, tgt_path) and draws n of its
// non-blank pairs. InputError when it has n or fewer: nothing would be left to train on.
HeldOutPairs draw_held_out(const std::string& src_path, const std::string& tgt_path, uint64_t n, uint64_t seed);

// Decides, pair by pair in file order over the non-blank pairs, what training must leave out.
class HeldOutFilter {
 public:
  HeldOutFilter() = default;  // holds nothing out
  explicit HeldOutFilter(const HeldOutPairs& held);
  // Call once per non-blank pair, in file order, from the first pair of a pass (restart() before
  // another pass). True when the pair is a held-out one or shares a side with one.
  bool excluded(const std::string& src, const std::string& tgt);
  void restart() { next_ = 0, position_ = 0, overlapping_ = 0; }
  // Of the pairs excluded since the pass began, those not drawn that share a sentence with one drawn.
  uint64_t overlapping() const { return overlapping_; }

 private:
  std::vector<uint64_t> index_;
  std::unordered_set<std::string> src_, tgt_;
  size_t next_ = 0;        // the next drawn index not yet reached
  uint64_t position_ = 0;  // the number of the pair being asked about
  uint64_t overlapping_ = 0;
};

}  // namespace yoke
