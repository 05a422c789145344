#include "train/training_data.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <mutex>
#include <random>

#include "batch/batching.h"
#include "util/portable_random.h"

namespace yoke {

TrainingData::TrainingData(std::vector<std::string> files, size_t max_tokens, uint64_t seed, CorpusHooks hooks)
    : files_(std::move(files)), max_tokens_(max_tokens), seed_(seed), hooks_(std::move(hooks)) {
  if (files_.size() == 1) {
    whole_ = load(0, 0);
    pairs_ = whole_->corpus.size();
    batches_per_epoch_ = epoch(0).size;
    return;
  }
  // The number of batches of a shard does not depend on the shuffle: packing follows the
  // sorted lengths, and the shuffle only reorders pairs of equal lengths.
  for (size_t f = 0; f < files_.size(); ++f) {
    const auto shard = load(f, 0);
    pairs_ += shard->corpus.size();
    batches_per_file_.push_back(shard->batches.size());
    batches_per_epoch_ += shard->batches.size();
  }
}

TrainingData::~TrainingData() = default;

// As the trainer always seeded an epoch's batches, so that one file batches as before.
uint64_t TrainingData::batch_seed(int epoch) const { return seed_ * 1000003ull + uint64_t(epoch); }

std::shared_ptr<const TrainingData::Shard> TrainingData::load(size_t file, uint64_t batch_seed) const {
  auto shard = std::make_shared<Shard>();
  shard->corpus = load_binarized(files_[file]);
  if (hooks_.shape) shard->corpus = hooks_.shape(std::move(shard->corpus));
  shard->src_lengths = hooks_.src_lengths(shard->corpus);
  shard->tgt_lengths = hooks_.tgt_lengths(shard->corpus);
  hooks_.check(*shard, files_[file]);
  if (files_.size() > 1)
    shard->batches = make_token_batches(shard->src_lengths, shard->tgt_lengths, max_tokens_, true,
                                        batch_seed ^ (0x9e3779b97f4a7c15ull * (file + 1)));
  return shard;
}

TrainingData::Epoch TrainingData::epoch(int epoch) const {
  if (whole_) {
    auto batches = std::make_shared<std::vector<std::vector<uint32_t>>>(make_token_batches(
        whole_->src_lengths, whole_->tgt_lengths, max_tokens_, true, batch_seed(epoch)));
    const size_t n = batches->size();
    return {n, [this, batches](size_t i) { return hooks_.batch(whole_->corpus, (*batches)[i]); }};
  }
  // The shards in an order drawn from the seed; batch i lies in the shard whose range holds it.
  struct Plan {
    std::vector<size_t> order, first;  // first[k]: the epoch's first batch in shard order[k]
    std::mutex mutex;
    std::map<size_t, std::shared_ptr<const Shard>> loaded;  // by position in `order`; two at most
  };
  auto plan = std::make_shared<Plan>();
  for (size_t f = 0; f < files_.size(); ++f) plan->order.push_back(f);
  std::mt19937_64 rng(batch_seed(epoch));
  shuffle_in_place(plan->order, rng);
  size_t total = 0;
  for (size_t f : plan->order) {
    plan->first.push_back(total);
    total += batches_per_file_[f];
  }
  const uint64_t seed = batch_seed(epoch);
  return {total, [this, plan, seed](size_t i) {
            const size_t k = size_t(std::upper_bound(plan->first.begin(), plan->first.end(), i) - plan->first.begin()) - 1;
            std::shared_ptr<const Shard> shard;
            {
              std::lock_guard<std::mutex> lock(plan->mutex);
              auto it = plan->loaded.find(k);
              shard = it != plan->loaded.end() ? it->second : plan->loaded[k] = load(plan->order[k], seed);
              // The loop moves forward: the shard before the previous one is not needed again.
              for (auto e = plan->loaded.begin(); plan->loaded.size() > 2;)
                e = e->first == k ? std::next(e) : plan->loaded.erase(e);
            }
            return hooks_.batch(shard->corpus, shard->batches[i - plan->first[k]]);
          }};
}

}  // namespace yoke
