// Validation during training: loss and nll over the validation set, and BLEU of the caller's
// decoder (greedy) where one is handed in. With several ranks each takes every world-th batch
// and sentence, and the sums over the ranks are the sums over the whole set.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "text/binarized.h"
#include "text/vocab.h"
#include "train/train_step.h"
#include "train/trainer.h"

namespace yoke {

struct ValidResult {
  double loss = 0, nll = 0, bleu = NAN;  // loss and nll in bits per token
};

struct ValidationSet {
  TokenizedCorpus corpus;
  std::vector<uint32_t> src_lengths, tgt_lengths;  // as the batcher counts them
  std::vector<std::string> refs;                   // detokenized references (translation only)
  Vocab tgt_vocab;
};

// The model is left in training mode.
ValidResult validate(Transformer& model, const ValidationSet& set, const Config& cfg, const at::Device& device,
                     ProcessGroup* group, const BatchPrefetch::Make& make_batch, const ValidationDecoder& decode);

}  // namespace yoke
