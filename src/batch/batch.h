// Padded tensors for one batch of sentence pairs: source + eos, target input bos + y,
// target output y + eos. Padding is on the right with id 0.
#pragma once
#include <vector>

#include "compat/torch.h"
#include "text/binarized.h"

namespace yoke {

struct Batch {
  at::Tensor src;      // [B, S] int64, ends with eos
  at::Tensor tgt_in;   // [B, T] bos y
  at::Tensor tgt_out;  // [B, T] y eos
  at::Tensor keep;     // flat indices of tgt_out's real positions, or undefined (found when needed)
  int64_t src_tokens = 0, tgt_tokens = 0;  // real tokens (with eos), for rates and loss scaling
};

Batch make_batch(const TokenizedCorpus& corpus, const std::vector<uint32_t>& indices);

// The batch on `device`, with `keep` found on the host first (counting real positions on a GPU
// would make the host wait); pinned memory and asynchronous copies where the device is a GPU.
Batch batch_to_device(Batch b, const at::Device& device);

// Source-only batch for decoding: each sentence + eos.
at::Tensor make_source_tensor(const std::vector<std::vector<int>>& sentences, const std::vector<size_t>& indices);

// Sentence lengths as the batcher counts them (with the eos / bos added here).
std::vector<uint32_t> source_lengths(const TokenizedCorpus& corpus);
std::vector<uint32_t> target_lengths(const TokenizedCorpus& corpus);

}  // namespace yoke
