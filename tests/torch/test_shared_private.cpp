// Shared-private bilingual embeddings (Liu et al. 2019, §2.2): which cells are shared, how gradients
// add up, what the parameters cost, and that every estimator trains on them.
#include <gtest/gtest.h>

#include "embed/sharing.h"
#include "util/error.h"

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
    EXPECT_GT(d_src[p.src][s - 1].item<double>(), 0.5) << cat;
    EXPECT_GT(d_tgt[p.tgt][s - 1].item<double>(), 0.5) << cat;

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
    EXPECT_TRUE(at::allclose(got, expected, 1e-5, 1e-6)) << cat;
    EXPECT_GT(expected.abs().sum().item<double>(), 0.0);
    // Private blocks receive only their own word's gradient.
    EXPECT_TRUE(at::allclose(param(*blocks, "src_private_" + cat).grad()[p.block_row],
                             e_src.grad()[p.src].narrow(0, s, 10 - s)));
    EXPECT_TRUE(at::allclose(param(*blocks, "tgt_private_" + cat).grad()[p.block_row],
                             e_tgt.grad()[p.tgt].narrow(0, s, 10 - s)));
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

INSTANTIATE_TEST_SUITE_P(AllEstimators, SharedPrivateEstimators,
                         ::testing::Values(Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance,
                                           Estimator::cosine),
                         [](const auto& info) { return std::string(name_of(info.param)); });
