// Training on a corpus written in several shards (`prepare --shard-size`): every pair once an
// epoch, one shard at a time, the same batches for the same seed, and an exact resume.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "batch/batch.h"
#include "cli_helpers.h"
#include "store/checkpoint.h"
#include "text/data_meta.h"
#include "train/training_data.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

// data_dir()'s corpus, prepared again in shards of 100 pairs (400 pairs: four shards).
const fs::path& sharded_data_dir() {
  static fs::path dir = [] {
    data_dir();  // writes the corpus
    PrepareOptions p = synthetic_prepare_options((work_dir() / "corpus").string(), (work_dir() / "sharded").string());
    p.vocab_size = 200;
    p.shard_pairs = 100;
    std::ostringstream log;
    prepare_data(p, log);
    return work_dir() / "sharded";
  }();
  return dir;
}

CorpusHooks plain_hooks() {
  CorpusHooks h;
  h.check = [](const CorpusShard&, const std::string&) {};
  h.src_lengths = [](const TokenizedCorpus& c) { return source_lengths(c); };
  h.tgt_lengths = [](const TokenizedCorpus& c) { return target_lengths(c); };
  h.batch = [](const TokenizedCorpus& c, const std::vector<uint32_t>& idx) { return make_batch(c, idx); };
  return h;
}

using Pair = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

std::vector<int64_t> unpadded(const at::Tensor& row) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < row.size(0); ++i)
    if (row[i].item<int64_t>() != 0) out.push_back(row[i].item<int64_t>());
  return out;
}

// The pairs of an epoch in the order its batches hold them.
std::vector<Pair> epoch_pairs(const TrainingData& data, int epoch) {
  const auto e = data.epoch(epoch);
  std::vector<Pair> out;
  for (size_t i = 0; i < e.size; ++i) {
    const Batch b = e.make(i);
    for (int64_t r = 0; r < b.src.size(0); ++r) out.emplace_back(unpadded(b.src[r]), unpadded(b.tgt_out[r]));
  }
  return out;
}

}  // namespace

TEST(TrainingData, ShardedEpochVisitsEveryPairOnceInASeededOrder) {
  const auto files = DataMeta::read(sharded_data_dir().string()).train_files();
  ASSERT_EQ(files.size(), 4u);
  const TrainingData data(files, 300, 7, plain_hooks());
  const TrainingData again(files, 300, 7, plain_hooks());
  const TrainingData whole(training_files(data_dir().string()), 300, 7, plain_hooks());
  EXPECT_EQ(data.pairs(), whole.pairs());

  const auto e0 = epoch_pairs(data, 0);
  EXPECT_EQ(e0.size(), data.pairs());
  std::map<Pair, int> count, expected;
  for (const auto& p : e0) ++count[p];
  for (const auto& p : epoch_pairs(whole, 0)) ++expected[p];
  EXPECT_EQ(count, expected);  // every pair exactly as often as in the one-file corpus
  EXPECT_EQ(data.epoch(0).size, data.batches_per_epoch());

  EXPECT_EQ(epoch_pairs(again, 0), e0);  // the seed decides everything
  const auto e1 = epoch_pairs(data, 1);
  EXPECT_NE(e1, e0);
  std::map<Pair, int> count1;
  for (const auto& p : e1) ++count1[p];
  EXPECT_EQ(count1, expected);
  // Batches taken out of order (as the prefetch thread and a resume do) are the same batches.
  const auto e = data.epoch(1);
  const Batch late = e.make(e.size - 1), early = e.make(0), late_again = e.make(e.size - 1);
  EXPECT_TRUE(at::equal(late.src, late_again.src));
  EXPECT_TRUE(at::equal(early.src, data.epoch(1).make(0).src));
}

TEST(TrainCli, ShardedDataTrainsAndResumesExactly) {
  auto args = [&](const fs::path& save, int updates) {
    auto a = tiny_train_args(save, updates, 5);
    for (size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == "--data") a[i + 1] = sharded_data_dir().string();
    return a;
  };
  const auto straight = work_dir() / "sharded_straight", resumed = work_dir() / "sharded_resumed";
  // 70 updates of batches of 300 tokens: into a third epoch of 400 pairs, so the shard order changes twice.
  ASSERT_EQ(run(args(straight, 70), work_dir() / "sharded_straight.log"), 0) << slurp(work_dir() / "sharded_straight.log");
  EXPECT_NE(slurp(work_dir() / "sharded_straight.log").find("epoch"), std::string::npos);
  ASSERT_EQ(run(args(resumed, 15), work_dir() / "sharded_resumed1.log"), 0) << slurp(work_dir() / "sharded_resumed1.log");
  ASSERT_EQ(run(args(resumed, 70), work_dir() / "sharded_resumed2.log"), 0) << slurp(work_dir() / "sharded_resumed2.log");
  EXPECT_NE(slurp(work_dir() / "sharded_resumed2.log").find("resumed from"), std::string::npos);
  const auto a = model_weights(load_checkpoint((straight / "checkpoint_last.ykp").string()));
  const auto b = model_weights(load_checkpoint((resumed / "checkpoint_last.ykp").string()));
  ASSERT_EQ(a.size(), b.size());
  // Exact: the same code path on the same machine must give the same parameters.
  for (const auto& [k, t] : a) EXPECT_TRUE(at::equal(t, b.at(k))) << k;
  const auto state = load_checkpoint((straight / "checkpoint_last.ykp").string()).meta.at("state");
  EXPECT_GE(state.at("epoch").get<int>(), 2) << "the run did not reach a third epoch; the test proves less";
}
