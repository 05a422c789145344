// Language-model training data, in the two shapes a user can choose (`lm_block`):
//  - sentences (lm_block = 0): each line on its own, input bos y, output y eos, padded on the right;
//  - blocks (lm_block = N): the lines joined into one stream "eos s1 eos s2 eos …" and cut into
//    windows of N inputs, each predicting the next token; consecutive windows share one token,
//    so every token of the stream is predicted exactly once.
// Both kinds are kept in a TokenizedCorpus (target side only), so the token-count batcher and
// the trainer's resumable batch order work unchanged.
#pragma once
#include <vector>

#include "batch/batch.h"
#include "text/binarized.h"

namespace yoke {

// The block corpus of a sentence corpus: entry i holds the stream tokens [i·N, i·N + N] (N + 1
// tokens, fewer for the last one).
TokenizedCorpus stream_blocks(const TokenizedCorpus& sentences, int64_t block);

// One batch; `blocks` says which of the two shapes `corpus` holds. Batch::src stays undefined.
Batch make_lm_batch(const TokenizedCorpus& corpus, const std::vector<uint32_t>& indices, bool blocks);

// Predicted positions per entry, as the batcher counts them.
std::vector<uint32_t> lm_lengths(const TokenizedCorpus& corpus, bool blocks);

// The token a sentence-level LM starts from (bos), and a block LM's stream separator (eos).
int lm_start_token(bool blocks);

}  // namespace yoke
