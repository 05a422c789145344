// Shared-private bilingual embeddings (Liu et al. 2019, §2.2): which cells are shared, how gradients
// add up, what the parameters cost, and that every estimator trains on them.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "embed/sharing.h"
#include "util/error.h"
#include "margin.h"

using namespace yoke;

namespace {

// 9 source and 8 target words, d = 10: λ = (0.9, 0.7, 0.5) → 9, 7 and 5 shared columns.
// lm: (4,5) (6,4); wf: (5,7); ur: (7,6). Unpaired: source 0–3, 8; target 0–3.
SharedPrivateLayout small_layout() {
  SharedPrivateLayout l;
  l.src_vocab = 9;
  l.tgt_vocab = 8;
  l.dim = 10;
  l.pairs[0] = {{4, 5}, {6, 4}};
  l.pairs[1] = {{5, 7}};
  l.pairs[2] = {{7, 6}};
  return l;
}

at::Tensor param(const torch::nn::Module& m, const std::string& name) {
  for (const auto& p : m.named_parameters(true))
    if (p.key() == name) return p.value();
  ADD_FAILURE() << "no parameter " << name;
  return {};
}

struct PairCase {
  int category;
  int64_t src, tgt, block_row;
};
const PairCase kPairs[] = {{0, 4, 5, 0}, {0, 6, 4, 1}, {1, 5, 7, 0}, {2, 7, 6, 0}};
const char* kCategory[] = {"lm", "wf", "ur"};

}  // namespace

TEST(SharedPrivate, PairsShareExactlyTheirFirstLambdaDColumns) {
  at::manual_seed(1);
  SharedPrivateBlocks blocks(small_layout(), /*pad_id=*/0);
  auto src = blocks.source(), tgt = blocks.target();
  ASSERT_EQ(src.sizes(), (at::IntArrayRef{9, 10}));
  ASSERT_EQ(tgt.sizes(), (at::IntArrayRef{8, 10}));
  for (const auto& p : kPairs) {
    const int64_t s = blocks.layout().shared_columns(p.category);
    EXPECT_EQ(s, std::vector<int64_t>({9, 7, 5})[p.category]);
    EXPECT_TRUE(at::equal(src[p.src].narrow(0, 0, s), tgt[p.tgt].narrow(0, 0, s))) << kCategory[p.category];
    // Private columns are drawn independently: no cell of them coincides.
    EXPECT_TRUE(src[p.src].narrow(0, s, 10 - s).ne(tgt[p.tgt].narrow(0, s, 10 - s)).all().item<bool>());
  }
  // Padding starts at zero on both sides.
  EXPECT_EQ(src[0].abs().sum().item<double>(), 0.0);
  EXPECT_EQ(tgt[0].abs().sum().item<double>(), 0.0);
}

TEST(SharedPrivate, ChangingASharedCellChangesBothWordsAPrivateCellOne) {
  at::manual_seed(2);
  SharedPrivateBlocks blocks(small_layout(), 0);
  for (const auto& p : kPairs) {
    const std::string cat = kCategory[p.category];
    const int64_t s = blocks.layout().shared_columns(p.category);
    auto before_src = blocks.source().clone(), before_tgt = blocks.target().clone();
    {
      at::NoGradGuard no_grad;
      param(blocks, "shared_" + cat)[p.block_row][s - 1].add_(1.0);
    }
    auto d_src = (blocks.source() - before_src).abs(), d_tgt = (blocks.target() - before_tgt).abs();
    EXPECT_EQ(d_src.gt(0).sum().item<int64_t>(), 1) << cat;
    EXPECT_EQ(d_tgt.gt(0).sum().item<int64_t>(), 1) << cat;
    YOKE_EXPECT_NEAR(d_src[p.src][s - 1].item<double>(), 1.0, 1e-5) << cat;  // x + 1 − x in float32, |x| < 8
    YOKE_EXPECT_NEAR(d_tgt[p.tgt][s - 1].item<double>(), 1.0, 1e-5) << cat;  // x + 1 − x in float32, |x| < 8

    before_src = blocks.source().clone();
    before_tgt = blocks.target().clone();
    {
      at::NoGradGuard no_grad;
      param(blocks, "src_private_" + cat)[p.block_row][0].add_(1.0);
    }
    d_src = (blocks.source() - before_src).abs();
    d_tgt = (blocks.target() - before_tgt).abs();
    EXPECT_EQ(d_src.gt(0).sum().item<int64_t>(), 1) << cat;
    EXPECT_GT(d_src[p.src][s].item<double>(), 0.5) << cat;  // the first private column
    EXPECT_EQ(d_tgt.gt(0).sum().item<int64_t>(), 0) << cat;
  }
}

TEST(SharedPrivate, SharedBlockGradientIsTheSumOfBothWords) {
  at::manual_seed(3);
  auto blocks = std::make_shared<SharedPrivateBlocks>(small_layout(), 0);
  // A loss that reads the source side by lookup and the target side as an output projection.
  auto e_src = blocks->source(), e_tgt = blocks->target();
  e_src.retain_grad();
  e_tgt.retain_grad();
  auto ids = at::tensor(std::vector<int64_t>{4, 6, 5, 7, 8, 4}, at::kLong);
  auto h = at::randn({5, 10});
  auto loss = (at::embedding(e_src, ids) * at::randn({6, 10})).sum() +
              at::log_softmax(at::matmul(h, e_tgt.t()), -1).select(1, 5).sum();
  loss.backward();
  for (const auto& p : kPairs) {
    const std::string cat = kCategory[p.category];
    const int64_t s = blocks->layout().shared_columns(p.category);
    auto expected = e_src.grad()[p.src].narrow(0, 0, s) + e_tgt.grad()[p.tgt].narrow(0, 0, s);
    auto got = param(*blocks, "shared_" + cat).grad()[p.block_row];
    YOKE_EXPECT_CLOSE(got, expected, 1e-5, 1e-6) << cat;
    EXPECT_GT(expected.abs().sum().item<double>(), 0.0);
    // Private blocks receive only their own word's gradient.
    YOKE_EXPECT_CLOSE(param(*blocks, "src_private_" + cat).grad()[p.block_row],
                      e_src.grad()[p.src].narrow(0, s, 10 - s), 1e-5, 1e-8);
    YOKE_EXPECT_CLOSE(param(*blocks, "tgt_private_" + cat).grad()[p.block_row],
                      e_tgt.grad()[p.tgt].narrow(0, s, 10 - s), 1e-5, 1e-8);
  }
}

TEST(SharedPrivate, ParameterCountIsTheClosedForm) {
  auto layout = small_layout();
  // n_c (s_c + 2 (d − s_c)) per category, plus full private rows for unpaired words.
  const int64_t closed = 2 * (9 + 2 * 1) + 1 * (7 + 2 * 3) + 1 * (5 + 2 * 5) + (5 + 4) * 10;
  EXPECT_EQ(layout.parameter_count(), closed);
  SharedPrivateBlocks blocks(layout, 0);
  int64_t n = 0;
  for (const auto& p : blocks.parameters()) n += p.numel();
  EXPECT_EQ(n, closed);

  EmbeddingSpec spec;
  spec.tie = Tie::shared_private;
  spec.src_vocab = 9;
  spec.tgt_vocab = 8;
  spec.dim = 10;
  spec.shared_private = std::make_shared<SharedPrivateLayout>(layout);
  const auto c = count_embeddings(spec);
  EXPECT_EQ(c.emb, closed);
  EXPECT_EQ(c.emb_untied, 9 * 10 + 2 * 8 * 10);
  // λ = 1 everywhere and every word paired would be exactly the size of one matrix per pair.
  SharedPrivateLayout all_shared = layout;
  all_shared.lambda = {1.0, 1.0, 1.0};
  EXPECT_EQ(all_shared.parameter_count(), 4 * 10 + 9 * 10);
}

TEST(SharedPrivate, RejectsPairsThatAreNotOneToOneOrOutOfRange) {
  auto twice = small_layout();
  twice.pairs[2].push_back({8, 5});  // target 5 already paired in lm
  EXPECT_THROW(twice.validate(), InputError);
  auto outside = small_layout();
  outside.pairs[1].push_back({8, 99});
  EXPECT_THROW(outside.validate(), InputError);
  EXPECT_NO_THROW(small_layout().validate());
}

// The target side is the output projection, under every estimator; a few steps of a toy
// objective lower the loss and keep the shared cells shared.
class SharedPrivateEstimators : public ::testing::TestWithParam<Estimator> {};

TEST_P(SharedPrivateEstimators, TrainsAndStaysShared) {
  at::manual_seed(4);
  EmbeddingSpec spec;
  spec.tie = Tie::shared_private;
  spec.output = GetParam();
  spec.src_vocab = 9;
  spec.tgt_vocab = 8;
  spec.dim = 10;
  spec.scale_by_sqrt_dim = false;
  spec.shared_private = std::make_shared<SharedPrivateLayout>(small_layout());
  WordEmbeddings emb(spec);
  EXPECT_EQ(&emb.target(), &emb.output());
  auto src_ids = at::tensor(std::vector<int64_t>{4, 5, 6, 7, 8}, at::kLong);
  auto targets = at::tensor(std::vector<int64_t>{5, 7, 4, 6, 1}, at::kLong);
  auto mix = at::randn({10, 10});
  std::vector<at::Tensor> params;
  for (auto& p : emb.parameters()) params.push_back(p);
  auto loss_now = [&] {
    auto h = at::tanh(at::matmul(emb.embed_source(src_ids), mix));
    return at::nll_loss(at::log_softmax(emb.logits(h), -1), targets);
  };
  const double first = loss_now().item<double>();
  for (int step = 0; step < 40; ++step) {
    for (auto& p : params) if (p.grad().defined()) p.grad().zero_();
    loss_now().backward();
    at::NoGradGuard no_grad;
    for (auto& p : params) p.sub_(p.grad() * 0.5);
  }
  const double last = loss_now().item<double>();
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_LT(last, 0.8 * first) << name_of(GetParam());
  auto src = emb.source()->full(), tgt = emb.target().full();
  EXPECT_TRUE(at::equal(src[4].narrow(0, 0, 9), tgt[5].narrow(0, 0, 9)));
}


namespace {

std::shared_ptr<WordEmbeddings> shared_private_embeddings(Estimator e) {
  EmbeddingSpec spec;
  spec.tie = Tie::shared_private;
  spec.output = e;
  spec.src_vocab = 9;
  spec.tgt_vocab = 8;
  spec.dim = 10;
  spec.scale_by_sqrt_dim = false;
  spec.shared_private = std::make_shared<SharedPrivateLayout>(small_layout());
  return std::make_shared<WordEmbeddings>(spec);
}

bool same(const at::Tensor& a, const at::Tensor& b) {
  return a.defined() == b.defined() && (!a.defined() || at::equal(a, b.detach()));
}

}  // namespace

// Without autograd (decoding) each side is assembled once and kept (embed/derived_cache.h):
// lookups, logits and the parts the fused loss and int8 decoding read are, bit for bit, what
// assembling afresh gives.
TEST_P(SharedPrivateEstimators, KeptWithoutAutogradAndBitIdentical) {
  at::manual_seed(5);
  auto emb = shared_private_embeddings(GetParam());
  auto src_ids = at::tensor(std::vector<int64_t>{4, 5, 6, 7, 8, 0}, at::kLong);
  auto tgt_ids = at::tensor(std::vector<int64_t>{5, 7, 4, 6, 1, 0}, at::kLong);
  auto h = at::randn({3, 10});
  // Autograd on: nothing kept, every value assembled afresh.
  const auto src = emb->source()->full(), tgt = emb->target().full();
  const auto x = emb->embed_source(src_ids), y = emb->embed_target(tgt_ids), logits = emb->logits(h);
  const auto parts = emb->logit_parts(h);
  const auto affine = emb->affine_logits();
  EXPECT_FALSE(emb->target().full().is_same(tgt));
  at::NoGradGuard no_grad;
  for (int call = 0; call < 2; ++call) {
    EXPECT_TRUE(same(emb->source()->full(), src) && same(emb->target().full(), tgt)) << call;
    EXPECT_TRUE(same(emb->embed_source(src_ids), x)) << name_of(GetParam()) << " call " << call;
    EXPECT_TRUE(same(emb->embed_target(tgt_ids), y)) << name_of(GetParam()) << " call " << call;
    EXPECT_TRUE(same(emb->logits(h), logits)) << name_of(GetParam()) << " call " << call;
    const auto p = emb->logit_parts(h);
    EXPECT_TRUE(same(p.h, parts.h) && same(p.matrix, parts.matrix) && same(p.scale, parts.scale) &&
                same(p.bias, parts.bias))
        << name_of(GetParam()) << " call " << call;
    const auto a = emb->affine_logits();
    EXPECT_TRUE(same(a.matrix, affine.matrix) && same(a.bias, affine.bias)) << name_of(GetParam()) << " call " << call;
  }
  // Kept: the same tensor, not assembled again.
  EXPECT_TRUE(emb->target().full().is_same(emb->target().full()));
  EXPECT_TRUE(emb->source()->full().is_same(emb->source()->full()));
}

// An in-place edit of any block (an optimizer step, a checkpoint load, averaging) reaches the
// next lookup and logits; were the versions ignored, they would return the kept matrices.
TEST_P(SharedPrivateEstimators, KeptMatricesFollowEveryBlock) {
  at::manual_seed(6);
  auto emb = shared_private_embeddings(GetParam());
  auto src_ids = at::arange(9, at::kLong), tgt_ids = at::arange(8, at::kLong);
  auto h = at::randn({3, 10});
  auto fresh = [&] {
    at::AutoGradMode grad(true);
    return std::vector<at::Tensor>{emb->embed_source(src_ids).detach(), emb->embed_target(tgt_ids).detach(),
                                   emb->logits(h).detach()};
  };
  at::NoGradGuard no_grad;
  for (const auto& p : emb->named_parameters(true)) {
    const auto x = emb->embed_source(src_ids), y = emb->embed_target(tgt_ids), l = emb->logits(h);
    p.value()[0][0].add_(1.0);
    const auto x2 = emb->embed_source(src_ids), y2 = emb->embed_target(tgt_ids), l2 = emb->logits(h);
    const bool source_side = p.key().find("tgt_") == std::string::npos;
    const bool target_side = p.key().find("src_") == std::string::npos;
    EXPECT_EQ(!at::equal(x, x2), source_side) << p.key();
    EXPECT_EQ(!at::equal(y, y2), target_side) << p.key();
    EXPECT_EQ(!at::equal(l, l2), target_side) << p.key();
    const auto want = fresh();
    EXPECT_TRUE(at::equal(x2, want[0]) && at::equal(y2, want[1]) && at::equal(l2, want[2]))
        << p.key() << " " << name_of(GetParam());
  }
  // A new dtype in new storage, the version counters untouched (Module::to would also turn the
  // integer row orders into doubles): never the float matrices kept before.
  for (auto& p : emb->parameters()) p.set_data(p.to(at::kDouble));
  EXPECT_EQ(emb->target().full().scalar_type(), at::kDouble);
  EXPECT_EQ(emb->logits(h.to(at::kDouble)).scalar_type(), at::kDouble);
  EXPECT_EQ(emb->embed_source(src_ids).scalar_type(), at::kDouble);
}

// Training after a no-grad pass filled the cache: every block gets the gradient it gets in a
// fresh model, bit for bit (autograd on never reads what was kept).
TEST_P(SharedPrivateEstimators, GradientsReachEveryBlockAfterANoGradPass) {
  auto run = [&](bool decode_first) {
    at::manual_seed(7);
    auto emb = shared_private_embeddings(GetParam());
    auto src_ids = at::arange(9, at::kLong), tgt_ids = at::arange(8, at::kLong);
    auto h = at::randn({4, 10}), c = at::randn({9, 10}), d = at::randn({8, 10});
    if (decode_first) {
      at::NoGradGuard no_grad;
      emb->embed_source(src_ids);
      emb->embed_target(tgt_ids);
      emb->logits(h);
    }
    ((emb->embed_source(src_ids) * c).sum() + (emb->embed_target(tgt_ids) * d).sum() +
     at::log_softmax(emb->logits(h), -1).select(1, 5).sum())
        .backward();
    std::map<std::string, at::Tensor> grads;
    for (const auto& p : emb->named_parameters(true)) grads[p.key()] = p.value().grad().clone();
    return grads;
  };
  const auto fresh = run(false), after = run(true);
  ASSERT_EQ(fresh.size(), 11u);
  for (const auto& [name, g] : fresh) {
    EXPECT_GT(g.abs().sum().item<double>(), 0.0) << name;
    EXPECT_TRUE(at::equal(g, after.at(name))) << name << " " << name_of(GetParam());
  }
}

INSTANTIATE_TEST_SUITE_P(AllEstimators, SharedPrivateEstimators,
                         ::testing::Values(Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance,
                                           Estimator::cosine),
                         [](const auto& info) { return std::string(name_of(info.param)); });
