// A lexical shortlist (Marian's --shortlist): per batch, the output layer is computed only over
// the target subwords that the batch's source subwords translate to most likely (from the IBM-2
// translation table of `yoke pair` / `yoke align`) and the most frequent ones, instead of the whole vocabulary.
// Every logit estimator is an affine map h·Mᵀ + b (WordEmbeddings::affine_logits), so keeping
// the rows of M for the shortlisted ids gives their exact logits; the softmax runs over them only.
#pragma once
#include <string>
#include <vector>

#include "compat/torch.h"
#include "text/vocab.h"

namespace yoke {

class Shortlist {
 public:
  // candidates[s]: target ids for source id s; always: ids kept in every batch (specials added).
  Shortlist(std::vector<std::vector<int>> candidates, std::vector<int> always, int target_vocab_size);

  // From a subword translation table (`yoke pair --table`, or `yoke align --table` on subword text; lines
  // "source<TAB>target<TAB>p(target|source)"): the `per_source` most likely targets of each source
  // subword, and as frequent ones the first `frequent` target ids (SentencePiece numbers BPE
  // pieces in merge order, frequent ones first, as Marian's frequency-sorted vocabularies do).
  // Throws InputError naming the file and line of a malformed line.
  static Shortlist from_table(const std::string& path, const Vocab& source, const Vocab& target, int per_source,
                              int frequent);

  // Sorted target ids allowed for the sources src [B, S] (ids, padded), as a kLong tensor on src's device.
  at::Tensor targets_for(const at::Tensor& src) const;
  int target_vocab_size() const { return target_vocab_size_; }

 private:
  std::vector<std::vector<int>> candidates_;
  std::vector<int> always_;
  int target_vocab_size_;
};

}  // namespace yoke
