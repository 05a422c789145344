// The training corpus as the loop sees it: so many batches an epoch, batch i built on demand.
//
// One file (train.bin): held in memory and batched as a whole each epoch, sorted by length and
// shuffled by the seed, as always. Several shards (a corpus prepared with more pairs than
// `prepare --shard-size`): each epoch visits the shards in an order drawn from the seed and
// batches each shard on its own (sorted and shuffled within it), reading one shard at a time,
// so memory holds at most two shards whatever the corpus size. Every shard is read and checked
// once at start-up, so a damaged shard stops the run before its first update.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "batch/batch.h"
#include "text/binarized.h"

namespace yoke {

// One file's corpus, shaped, with the lengths the batcher counts.
struct CorpusShard {
  TokenizedCorpus corpus;
  std::vector<uint32_t> src_lengths, tgt_lengths;
  std::vector<std::vector<uint32_t>> batches;  // of the epoch it was loaded for (several files only)
};

// How the trainer turns a corpus into batches (a translation or a language model).
struct CorpusHooks {
  std::function<TokenizedCorpus(TokenizedCorpus)> shape;  // e.g. a language model's blocks; may be empty
  std::function<void(const CorpusShard&, const std::string& file)> check;  // throws InputError naming the file
  std::function<std::vector<uint32_t>(const TokenizedCorpus&)> src_lengths, tgt_lengths;
  std::function<Batch(const TokenizedCorpus&, const std::vector<uint32_t>&)> batch;
};

class TrainingData {
 public:
  // files: the corpus's binarized files in order (paths); seed and max_tokens: the batching.
  TrainingData(std::vector<std::string> files, size_t max_tokens, uint64_t seed, CorpusHooks hooks);
  ~TrainingData();

  size_t pairs() const { return pairs_; }  // entries (pairs, sentences or blocks) of all files
  size_t batches_per_epoch() const { return batches_per_epoch_; }
  size_t files() const { return files_.size(); }

  struct Epoch {
    size_t size = 0;
    std::function<Batch(size_t i)> make;  // thread-safe: the prefetch thread calls it too
  };
  // The same batches for the same seed and epoch, on any machine: resuming at batch i continues
  // exactly.
  Epoch epoch(int epoch) const;

 private:
  using Shard = CorpusShard;
  std::shared_ptr<const Shard> load(size_t file, uint64_t batch_seed) const;
  uint64_t batch_seed(int epoch) const;

  std::vector<std::string> files_;
  size_t max_tokens_;
  uint64_t seed_;
  CorpusHooks hooks_;
  size_t pairs_ = 0, batches_per_epoch_ = 0;
  std::vector<size_t> batches_per_file_;
  std::shared_ptr<const Shard> whole_;  // the one file's corpus, kept in memory
};

}  // namespace yoke
