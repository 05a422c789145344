// A training corpus in several binarized files (shards), so that neither `yoke prepare` nor
// training ever holds a corpus larger than memory: prepare writes one shard at a time, training
// reads one shard at a time (train/training_data.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "text/binarized.h"

namespace yoke {

// Writes pairs into DIR/<stem>.000.bin, <stem>.001.bin, ... of `shard_pairs` pairs each; when
// one shard is enough it is called DIR/<stem>.bin, as a corpus always was.
class ShardWriter {
 public:
  ShardWriter(std::string dir, std::string stem, size_t shard_pairs);
  void add(const std::vector<int>& src, const std::vector<int>& tgt);
  // Writes what is left; the file names (relative to dir) in order.
  std::vector<std::string> finish();
  size_t pairs() const { return pairs_; }
  uint64_t src_tokens() const { return src_tokens_; }
  uint64_t tgt_tokens() const { return tgt_tokens_; }

 private:
  void flush();
  std::string dir_, stem_;
  size_t shard_pairs_, pairs_ = 0;
  uint64_t src_tokens_ = 0, tgt_tokens_ = 0;
  TokenizedCorpus shard_;
  std::vector<std::string> files_;
};

}  // namespace yoke
