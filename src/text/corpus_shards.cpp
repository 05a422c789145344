#include "text/corpus_shards.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

namespace yoke {

ShardWriter::ShardWriter(std::string dir, std::string stem, size_t shard_pairs)
    : dir_(std::move(dir)), stem_(std::move(stem)), shard_pairs_(std::max<size_t>(1, shard_pairs)) {}

void ShardWriter::add(const std::vector<int>& src, const std::vector<int>& tgt) {
  shard_.add(src, tgt);
  ++pairs_;
  src_tokens_ += src.size();
  tgt_tokens_ += tgt.size();
  if (shard_.size() == shard_pairs_) flush();
}

void ShardWriter::flush() {
  if (shard_.size() == 0) return;
  char name[32];
  std::snprintf(name, sizeof name, ".%03zu.bin", files_.size());
  files_.push_back(stem_ + name);
  save_binarized(dir_ + "/" + files_.back(), shard_);
  shard_ = TokenizedCorpus();
}

std::vector<std::string> ShardWriter::finish() {
  flush();
  if (files_.size() == 1) {
    std::filesystem::rename(dir_ + "/" + files_[0], dir_ + "/" + stem_ + ".bin");
    files_[0] = stem_ + ".bin";
  }
  return files_;
}

}  // namespace yoke
