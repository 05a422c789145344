// loss/smoothed_loss_row.h against the formulas in double precision, on rows that end inside a
// block of 16 and rows shorter than one block.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "loss/smoothed_loss_row.h"

using namespace yoke;

TEST(SmoothedLossRow, LogSumExpTargetSumAndGradientMatchTheFormulas) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int64_t n : {1, 7, 16, 37, 8000}) {
    std::vector<float> l(static_cast<size_t>(n));
    for (auto& x : l) x = normal(rng);
    const int64_t target = n / 3;
    const float b = n > 1 ? 0.1f / float(n - 1) : 0.0f, a = 1.0f - 0.1f - b;
    double top = -INFINITY, sum = 0, total = 0;
    for (float x : l) top = std::max(top, double(x)), sum += x;
    for (float x : l) total += std::exp(double(x) - top);
    const double lse = top + std::log(total);
    const auto want_grad = [&](int64_t v) {
      return (a + b * double(n)) * std::exp(double(l[size_t(v)]) - lse) - b - (v == target ? a : 0.0);
    };
    std::vector<double> grads(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) grads[size_t(v)] = want_grad(v);

    auto row = l;
    const auto got = smoothed_loss_row(row.data(), n, target, a, b, true);
    // float sums of n terms of size ≤ ~16 in another order: n·2^-24 relative, with room.
    EXPECT_NEAR(got.log_sum_exp, lse, 1e-5 * std::max(1.0, std::abs(lse))) << n;
    EXPECT_EQ(got.target_logit, l[size_t(target)]) << n;
    EXPECT_NEAR(got.logit_sum, sum, 4e-7 * double(n) * 16) << n;
    // Each gradient: e^x to ~1 ulp (Cephes) times a scale rounded once, minus b.
    for (int64_t v = 0; v < n; ++v)
      ASSERT_NEAR(row[size_t(v)], grads[size_t(v)], 1e-6 + 1e-5 * std::abs(grads[size_t(v)])) << n << " " << v;
    // Without the gradient, the same figures: exact, the same passes compute them either way.
    auto again = l;
    const auto plain = smoothed_loss_row(again.data(), n, target, a, b, false);
    EXPECT_EQ(plain.log_sum_exp, got.log_sum_exp);
    EXPECT_EQ(plain.logit_sum, got.logit_sum);
  }
}

TEST(SmoothedLossRow, ANanLogitMakesTheRowNan) {
  std::vector<float> l(40, 1.0f);
  l[21] = NAN;
  EXPECT_TRUE(std::isnan(smoothed_loss_row(l.data(), 40, 3, 0.9f, 0.001f, true).log_sum_exp));
}
