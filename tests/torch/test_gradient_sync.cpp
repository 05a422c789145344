// GradientSync and the loop's collectives on a real Gloo group of two ranks, as two threads of
// this process on 127.0.0.1 (the end-to-end runs are in test_distributed_cli.cpp). Each rank
// trains a tiny model on its own batches; after finish() both hold the sum of the two ranks'
// gradients.
#include <gtest/gtest.h>

#include <exception>
#include <thread>

#include "batch/batch.h"
#include "store/model_store.h"
#include "tiny_model.h"
#include "train/collectives.h"
#include "train/flat_adam.h"
#include "train/gradient_sync.h"
#include "train/local_launch.h"
#include "train/process_group.h"
#include "train/train_step.h"

using namespace yoke;
using yoke::test::tiny_config;

namespace {

TokenizedCorpus pairs(uint64_t seed) {
  at::manual_seed(seed);
  TokenizedCorpus c;
  for (int i = 0; i < 6; ++i) {
    const int64_t len = at::randint(2, 7, {1}).item<int64_t>();
    std::vector<int> s(static_cast<size_t>(len));
    for (auto& x : s) x = int(at::randint(4, 24, {1}).item<int64_t>());
    c.add(s, s);
  }
  return c;
}

struct Rank {
  std::shared_ptr<Transformer> model;
  std::unique_ptr<FlatAdam> opt;
  std::vector<at::Tensor> params;
  std::vector<Batch> micro;  // this rank's two micro-batches
  at::Tensor local;          // its own gradient, summed over them
  at::Tensor synced;         // after finish()
  UpdateCounts shared;
  std::exception_ptr error;
};

}  // namespace

TEST(GradientSync, AfterFinishEachRankHoldsTheSumOverRanks) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  const Config cfg = tiny_config();
  Rank ranks[2];
  // Models and batches are made here, on one thread: LibTorch's generator is global.
  for (int r = 0; r < 2; ++r) {
    at::manual_seed(21);  // the same weights on both ranks, as after share_start
    ranks[r].model = build_model(cfg);
    ranks[r].model->train();
    for (auto& p : ranks[r].model->parameters(true)) ranks[r].params.push_back(p);
    ranks[r].opt = std::make_unique<FlatAdam>(ranks[r].params, AdamOptions{});
    const TokenizedCorpus c = pairs(100 + uint64_t(r));
    ranks[r].micro = {make_batch(c, {0, 1, 2}), make_batch(c, {3, 4, 5})};
  }
  DistributedEnv env;
  env.world_size = env.local_world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = free_loopback_port();
  auto work = [&](int r) {
    Rank& me = ranks[r];
    try {
      DistributedEnv mine = env;
      mine.rank = mine.local_rank = r;
      auto group = ProcessGroup::connect(mine, 30.0);
      // Small buckets: several collectives in flight, started from the backward's hooks.
      GradientSync sync(*group, me.params, me.opt->grads(), 0.002);
      auto backward_all = [&](bool arm_last) {
        me.opt->zero_grad();
        for (size_t k = 0; k < me.micro.size(); ++k) {
          if (arm_last && k + 1 == me.micro.size()) sync.arm();
          forward_loss(*me.model, me.micro[k], at::kCPU, cfg).loss.backward();
        }
      };
      backward_all(false);  // unarmed: the hooks start nothing
      me.local = me.opt->grads().clone();
      backward_all(true);
      sync.finish();
      me.synced = me.opt->grads().clone();
      me.shared = share_update_counts(group.get(), {10 + r, 100 * (r + 1), r == 1, r == 0 ? 42.0 : 7.0});
    } catch (...) {
      me.error = std::current_exception();
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  for (auto& r : ranks)
    if (r.error) std::rethrow_exception(r.error);
  ASSERT_FALSE(at::equal(ranks[0].local, ranks[1].local));  // the ranks saw different batches
  // Each element is one float addition a + b in Gloo as here; addition commutes: exact.
  const at::Tensor sum = ranks[0].local + ranks[1].local;
  EXPECT_TRUE(at::equal(ranks[0].synced, sum));
  EXPECT_TRUE(at::equal(ranks[1].synced, sum));
  for (const auto& r : ranks) {
    EXPECT_EQ(r.shared.tgt_tokens, 21);
    EXPECT_EQ(r.shared.tokens, 300);
    EXPECT_TRUE(r.shared.stop_asked);  // rank 1 was asked: every rank stops
    EXPECT_EQ(r.shared.elapsed_s, 42.0);  // rank 0's clock
  }
}

TEST(Collectives, WithoutAGroupEachIsTheIdentity) {
  const UpdateCounts mine{5, 9, true, 3.5};
  const UpdateCounts same = share_update_counts(nullptr, mine);
  EXPECT_EQ(same.tgt_tokens, 5);
  EXPECT_EQ(same.tokens, 9);
  EXPECT_TRUE(same.stop_asked);
  EXPECT_EQ(same.elapsed_s, 3.5);
  at::Tensor t = at::arange(3, at::kDouble);
  sum_over_ranks(nullptr, t);
  EXPECT_TRUE(at::equal(t, at::arange(3, at::kDouble)));
}
