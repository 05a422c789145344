// The fused, chunked output loss is an optimisation only: its loss, nll and every gradient
// equal the straightforward logits → log-softmax → label-smoothed loss, for every estimator,
// full and factored matrices, with and without smoothing, and with chunks that do not divide N.
#include <gtest/gtest.h>

#include "embed/estimator.h"
#include "loss/fused_loss.h"
#include "loss/loss.h"
#include "margin.h"

using namespace yoke;

namespace {

struct Grads {
  at::Tensor loss, nll, h;
  std::vector<at::Tensor> params;
};

Grads loss_grads(WordMatrix& m, const at::Tensor& h0, const at::Tensor& target, Estimator e, double eps, bool fused) {
  for (auto& p : m.parameters()) p.mutable_grad() = at::Tensor();
  auto h = h0.clone().requires_grad_(true);
  LossSums out = fused ? fused_output_loss(logit_parts(e, m, h), target, eps, 3)
                       : label_smoothed_loss(estimate_logits(e, m, h), target, eps);
  (out.loss * 0.37).backward();  // an upstream gradient other than 1
  Grads g{out.loss.detach(), out.nll.detach(), h.grad().clone(), {}};
  for (auto& p : m.parameters()) g.params.push_back(p.grad().clone());
  return g;
}

}  // namespace

class FusedLoss : public ::testing::TestWithParam<std::tuple<Estimator, int64_t, double>> {};

TEST_P(FusedLoss, EqualsTheStraightforwardLossAndGradients) {
  const auto [estimator, rank, eps] = GetParam();
  at::manual_seed(3);
  WordMatrix m(13, 8, rank, 0);
  const auto h = at::randn({10, 8});
  const auto target = at::randint(1, 13, {10}, at::kLong);
  const Grads plain = loss_grads(m, h, target, estimator, eps, false);
  const Grads fused = loss_grads(m, h, target, estimator, eps, true);
  YOKE_EXPECT_NEAR(fused.loss.item<double>(), plain.loss.item<double>(), 1e-4);
  YOKE_EXPECT_NEAR(fused.nll.item<double>(), plain.nll.item<double>(), 1e-4);
  YOKE_EXPECT_CLOSE(fused.h, plain.h, 1e-4, 1e-5) << (fused.h - plain.h).abs().max().item<double>();
  ASSERT_EQ(fused.params.size(), plain.params.size());
  for (size_t i = 0; i < plain.params.size(); ++i)
    YOKE_EXPECT_CLOSE(fused.params[i], plain.params[i], 1e-4, 1e-5)
        << i << ": " << (fused.params[i] - plain.params[i]).abs().max().item<double>();

  at::NoGradGuard no_grad;  // validation: values only
  const auto value = fused_output_loss(logit_parts(estimator, m, h), target, eps);
  YOKE_EXPECT_NEAR(value.loss.item<double>(), plain.loss.item<double>(), 1e-4);
  EXPECT_FALSE(value.loss.requires_grad());
}

INSTANTIATE_TEST_SUITE_P(AllEstimators, FusedLoss,
                         ::testing::Combine(::testing::Values(Estimator::dot, Estimator::l2, Estimator::square,
                                                              Estimator::distance, Estimator::cosine),
                                            ::testing::Values(int64_t(0), int64_t(4)), ::testing::Values(0.0, 0.1)));
