// One update of the training loop (train/train_step.h) on a tiny model, against the same
// arithmetic done by hand; the prefetcher; and the texts of the training log (train/train_log.h)
// against the printf formats they replaced.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>

#include "batch/batch.h"
#include "copy_task.h"
#include "tiny_model.h"
#include "store/model_store.h"
#include "train/flat_adam.h"
#include "train/process_group.h"
#include "train/train_log.h"
#include "train/train_step.h"
#include "margin.h"

using namespace yoke;
using yoke::test::tiny_config;

namespace {

// Random sentence pairs over ids 4..23 (target = reversed source), lengths 2..7.
TokenizedCorpus random_pairs(size_t n, uint64_t seed) {
  at::manual_seed(seed);
  TokenizedCorpus c;
  for (size_t i = 0; i < n; ++i) {
    const int64_t len = at::randint(2, 8, {1}).item<int64_t>();
    const auto ids = at::randint(4, 24, {len});
    std::vector<int> src(static_cast<size_t>(len)), tgt(static_cast<size_t>(len));
    for (int64_t j = 0; j < len; ++j) src[size_t(j)] = tgt[size_t(len - 1 - j)] = int(ids[j].item<int64_t>());
    c.add(src, tgt);
  }
  return c;
}

struct ModelAndOptimizer {
  std::shared_ptr<Transformer> model;
  std::unique_ptr<FlatAdam> opt;
};

// The same weights every time (seeded).
ModelAndOptimizer make_model(const Config& cfg) {
  at::manual_seed(11);
  ModelAndOptimizer s;
  s.model = build_model(cfg);
  s.model->train();
  std::vector<at::Tensor> params;
  for (auto& p : s.model->parameters(true)) params.push_back(p);
  s.opt = std::make_unique<FlatAdam>(params, AdamOptions{cfg.adam_beta1, cfg.adam_beta2, cfg.adam_eps, cfg.weight_decay});
  return s;
}

struct ByHand {
  at::Tensor raw_grad;  // summed over the micro-batches, before any scaling
  int64_t tgt_tokens = 0, tokens = 0;
};

// The update written out: both micro-batches' backward into one gradient, divided by their
// target tokens, clipped, one Adam step at the first update's learning rate.
ByHand update_by_hand(ModelAndOptimizer& s, const Config& cfg, const std::vector<Batch>& micro) {
  ByHand h;
  s.opt->zero_grad();
  for (size_t j = 0; j < micro.size(); ++j) {
    at::manual_seed(uint64_t(cfg.seed) * 7919ull + 1 + j * 1000003ull);  // as the step seeds dropout
    auto out = forward_loss(*s.model, micro[j], at::kCPU, cfg);
    out.loss.backward();
    h.tgt_tokens += out.tokens;
    h.tokens += micro[j].src_tokens + micro[j].tgt_tokens;
  }
  h.raw_grad = s.opt->grads().clone();
  s.opt->scale_grad(1.0 / double(h.tgt_tokens));
  s.opt->clip_grad_norm(cfg.clip_norm);
  s.opt->step(inverse_sqrt_lr(cfg.lr, cfg.warmup, 1));
  return h;
}

Config step_config() {
  Config cfg = tiny_config();
  cfg.update_freq = 2;
  cfg.clip_norm = 0;  // off unless a test sets it
  cfg.dropout = 0.1;  // seeded per micro-batch: the step and the hand draw the same masks
  cfg.lr = 1e-3;
  cfg.warmup = 4;
  return cfg;
}

}  // namespace

// The step and the hand run the same operations in the same order on one thread, so the
// weights agree exactly, not merely within a tolerance.
TEST(TrainStep, UpdateFreq2EqualsTwoMicroBatchesAccumulatedByHand) {
  const Config cfg = step_config();
  const TokenizedCorpus corpus = random_pairs(8, 3);
  const std::vector<std::vector<uint32_t>> batches = {{0, 1, 2}, {3, 4}, {5, 6, 7}};
  auto make = [&](const std::vector<uint32_t>& idx) { return make_batch(corpus, idx); };

  ModelAndOptimizer a = make_model(cfg);
  TrainStep step(cfg, *a.model, *a.opt, at::kCPU, nullptr, nullptr);
  EXPECT_EQ(step.batches_per_update(), 2u);
  LoopState st;
  BatchPrefetch prefetch(batches, make);
  const RunClock clock(0);
  const StepResult r = step.update(st, prefetch, clock);

  ModelAndOptimizer b = make_model(cfg);
  const ByHand h = update_by_hand(b, cfg, {make(batches[0]), make(batches[1])});

  EXPECT_TRUE(at::equal(a.opt->params(), b.opt->params()));
  EXPECT_FALSE(at::equal(a.opt->params(), make_model(cfg).opt->params()));  // the update did move them
  EXPECT_EQ(r.tgt_tokens, h.tgt_tokens);
  EXPECT_EQ(r.tokens, h.tokens);
  ASSERT_EQ(r.losses.size(), 2u);
  EXPECT_EQ(r.losses[0].tokens + r.losses[1].tokens, h.tgt_tokens);
  EXPECT_DOUBLE_EQ(r.lr, inverse_sqrt_lr(cfg.lr, cfg.warmup, 1));
  EXPECT_EQ(st.update, 1);
  EXPECT_EQ(st.batch_in_epoch, 2u);
  EXPECT_EQ(st.tokens, h.tokens);
  EXPECT_FALSE(r.stop_asked);

  // The next update takes the epoch's last batch alone (the epoch has no fourth).
  const StepResult r2 = step.update(st, prefetch, clock);
  EXPECT_EQ(r2.losses.size(), 1u);
  EXPECT_EQ(st.batch_in_epoch, 3u);
  EXPECT_EQ(st.update, 2);
}

TEST(TrainStep, GradientIsDividedByTheTargetTokensOfTheUpdate) {
  const Config cfg = step_config();
  const TokenizedCorpus corpus = random_pairs(6, 5);
  const std::vector<std::vector<uint32_t>> batches = {{0, 1, 2}, {3, 4, 5}};
  auto make = [&](const std::vector<uint32_t>& idx) { return make_batch(corpus, idx); };
  ModelAndOptimizer a = make_model(cfg);
  TrainStep step(cfg, *a.model, *a.opt, at::kCPU, nullptr, nullptr);
  LoopState st;
  BatchPrefetch prefetch(batches, make);
  const StepResult r = step.update(st, prefetch, RunClock(0));
  ModelAndOptimizer b = make_model(cfg);
  const ByHand h = update_by_hand(b, cfg, {make(batches[0]), make(batches[1])});
  // The optimizer step leaves the gradient as it used it: the raw sum × 1/target tokens.
  EXPECT_TRUE(at::equal(a.opt->grads(), h.raw_grad.mul(1.0 / double(h.tgt_tokens))));
  // The same float32 values, scaled before the norm (the step) or after it (by hand), summed in
  // each kernel family's own order: relatively a few times float32's 6e-8 apart (5e-7 absolute
  // was seen on a norm of a few units); 1e-5 of the norm leaves room and catches a wrong scale.
  const double by_hand = h.raw_grad.norm().item<double>() / double(h.tgt_tokens);
  YOKE_EXPECT_NEAR(r.gnorm.item<double>(), by_hand, 1e-5 * by_hand);
}

TEST(TrainStep, ClipsTheGradientNorm) {
  Config cfg = step_config();
  cfg.clip_norm = 1e-3;  // far below a fresh model's per-token gradient norm
  const TokenizedCorpus corpus = random_pairs(4, 7);
  const std::vector<std::vector<uint32_t>> batches = {{0, 1}, {2, 3}};
  ModelAndOptimizer a = make_model(cfg);
  TrainStep step(cfg, *a.model, *a.opt, at::kCPU, nullptr, nullptr);
  LoopState st;
  BatchPrefetch prefetch(batches, [&](const std::vector<uint32_t>& idx) { return make_batch(corpus, idx); });
  const StepResult r = step.update(st, prefetch, RunClock(0));
  const double before = r.gnorm.item<double>(), after = a.opt->grads().norm().item<double>();
  EXPECT_GT(before, 10 * cfg.clip_norm);
  // Clipping multiplies by clip / (norm + 1e-6): the norm lands within 1e-6 relative of clip.
  YOKE_EXPECT_NEAR(after, cfg.clip_norm, 1e-3 * cfg.clip_norm);
}

namespace {
// A stand-in for a rank of a larger group: only its place matters to the batch indexing.
struct FakeGroup final : ProcessGroup {
  FakeGroup(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(at::Tensor&) override {}
  std::unique_ptr<PendingCollective> start_allreduce_sum(at::Tensor) override { return nullptr; }
  void broadcast(at::Tensor&, int) override {}
  int rank_, size_;
};
}  // namespace

TEST(TrainStep, EachRankTakesItsShareOfTheGlobalBatch) {
  Config cfg = step_config();
  cfg.update_freq = 2;
  ModelAndOptimizer a = make_model(cfg);
  FakeGroup r0(0, 3), r1(1, 3), r2(2, 3);
  TrainStep s0(cfg, *a.model, *a.opt, at::kCPU, &r0, nullptr), s1(cfg, *a.model, *a.opt, at::kCPU, &r1, nullptr),
      s2(cfg, *a.model, *a.opt, at::kCPU, &r2, nullptr);
  EXPECT_EQ(s1.batches_per_update(), 6u);
  EXPECT_EQ(s0.my_batches(12, 100), (std::vector<size_t>{12, 13}));
  EXPECT_EQ(s1.my_batches(12, 100), (std::vector<size_t>{14, 15}));
  EXPECT_EQ(s2.my_batches(12, 100), (std::vector<size_t>{16, 17}));
  // The epoch's end: the last ranks get fewer batches, or none.
  EXPECT_EQ(s0.my_batches(12, 15), (std::vector<size_t>{12, 13}));
  EXPECT_EQ(s1.my_batches(12, 15), (std::vector<size_t>{14}));
  EXPECT_TRUE(s2.my_batches(12, 15).empty());
}

TEST(BatchPrefetch, TakesEachBatchWhetherPrefetchedOrNot) {
  const TokenizedCorpus corpus = random_pairs(6, 9);
  const std::vector<std::vector<uint32_t>> batches = {{0, 1}, {2, 3}, {4, 5}};
  int built = 0;
  BatchPrefetch p(batches, [&](const std::vector<uint32_t>& idx) { ++built; return make_batch(corpus, idx); });
  const Batch direct = make_batch(corpus, batches[2]);
  p.prefetch(2);
  EXPECT_TRUE(at::equal(p.take(2).src, direct.src));  // the prefetched one
  EXPECT_TRUE(at::equal(p.take(1).src, make_batch(corpus, batches[1]).src));  // built now
  p.prefetch(3);  // past the end: nothing
  EXPECT_EQ(built, 2);
}

TEST(TrainLog, TextsAreThoseOfTheFormerPrintfFormats) {
  Config cfg;
  std::ostringstream out;
  TrainLog log(cfg, out, nullptr, at::kCPU);
  LoopState st;
  st.epoch = 3;
  st.update = 1200;
  log.valid(st, 4.56789, 3.21012, 27.456, true);
  log.valid(st, 4.5, 3.2, NAN, false);
  char a[200], b[200];
  std::snprintf(a, sizeof a, "valid | epoch %d | update %lld | loss %.3f | nll %.3f | ppl %.2f%s%s", 3, 1200LL, 4.56789,
                3.21012, std::pow(2.0, 3.21012), " | bleu 27.46", " | best");
  std::snprintf(b, sizeof b, "valid | epoch %d | update %lld | loss %.3f | nll %.3f | ppl %.2f%s%s", 3, 1200LL, 4.5, 3.2,
                std::pow(2.0, 3.2), "", "");
  EXPECT_EQ(out.str(), std::string(a) + "\n" + b + "\n");

  std::snprintf(a, sizeof a, "epoch %d | loss %s | %.0f tok/s | lr %.2e%s", 3, "-", 12345.6, 3.2e-4, "");
  EXPECT_EQ(log.bar_text(st, 12345.6, 3.2e-4), a);
  cfg.max_minutes = 10;
  st.elapsed_s = 60;
  TrainLog timed(cfg, out, nullptr, at::kCPU);
  EXPECT_EQ(timed.bar_text(st, 99.4, 1e-3), "epoch 3 | loss - | 99 tok/s | lr 1.00e-03 | 9m00s left");
}
