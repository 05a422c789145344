// model/dropout.h: the mask made from (seed, index), in place of LibTorch's one-number-at-a-time
// bernoulli_. What dropout must be: zeros with probability p and 1/(1−p) otherwise, the same mask
// whatever the thread count, following at::manual_seed, and its gradient that same mask.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compat/torch.h"
#include "model/dropout.h"

using namespace yoke;

TEST(Dropout, DropsAboutPAndScalesTheRestSoTheMeanStays) {
  const int64_t n = 1 << 20;
  for (double p : {0.1, 0.3, 0.5}) {
    std::vector<float> mask(static_cast<size_t>(n));
    dropout_mask(12345, p, n, mask.data());
    const float keep = float(1.0 / (1.0 - p));
    int64_t dropped = 0;
    for (float m : mask) {
      ASSERT_TRUE(m == 0.0f || m == keep) << m;
      dropped += m == 0.0f;
    }
    // Binomial(n, p): 6 standard deviations, ~3e-3 of n at p = 0.5; a mask that is off by a bias
    // of that size would shift every activation's mean.
    const double sd = std::sqrt(double(n) * p * (1 - p));
    EXPECT_NEAR(double(dropped), p * double(n), 6 * sd) << "p = " << p;
  }
}

TEST(Dropout, NeighbouringElementsAndSeedsAreNotAlike) {
  // A weak hash shows as runs: consecutive elements, or two seeds, agreeing more than chance.
  const int64_t n = 1 << 18;
  const double p = 0.5;
  std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  dropout_mask(1, p, n, a.data());
  dropout_mask(2, p, n, b.data());
  int64_t same_next = 0, same_seed = 0;
  for (int64_t i = 0; i + 1 < n; ++i) same_next += (a[size_t(i)] == 0) == (a[size_t(i + 1)] == 0);
  for (int64_t i = 0; i < n; ++i) same_seed += (a[size_t(i)] == 0) == (b[size_t(i)] == 0);
  const double sd = std::sqrt(double(n) * 0.25);  // agreement is Binomial(n, 1/2) when independent
  EXPECT_NEAR(double(same_next), 0.5 * double(n), 6 * sd);
  EXPECT_NEAR(double(same_seed), 0.5 * double(n), 6 * sd);
}

TEST(Dropout, ElementIsTheSameWhetherMadeSixteenAtATimeOrAlone) {
  // Of 1000 elements the last 8 are made one at a time; of 1024, 16 at a time.
  std::vector<float> short_row(1000), long_row(1024);
  dropout_mask(99, 0.5, 1000, short_row.data());
  dropout_mask(99, 0.5, 1024, long_row.data());
  for (size_t i = 0; i < short_row.size(); ++i) ASSERT_EQ(short_row[i], long_row[i]) << i;
}

TEST(Dropout, TheSameMaskOnAnyThreadCountAndAfterTheSameSeed) {
  const auto x = at::randn({300, 257});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  at::manual_seed(7);
  const auto one = yoke::dropout(x, 0.2, true);
  at::set_num_threads(2);
  at::manual_seed(7);
  const auto two = yoke::dropout(x, 0.2, true);
  const auto next = yoke::dropout(x, 0.2, true);  // the generator moved on: another mask
  at::set_num_threads(threads);
  EXPECT_TRUE(at::equal(one, two));  // exact: a mask element depends on (seed, index) alone
  EXPECT_FALSE(at::equal(one, next));
}

TEST(Dropout, TheGradientIsTheMaskAndEvaluationLeavesXAlone) {
  const auto x = at::randn({64, 33}).requires_grad_(true);
  const auto y = yoke::dropout(x, 0.25, true);
  y.sum().backward();
  // y = x · mask, so dy/dx is the mask: 0 where y is 0, 1/(1−p) elsewhere (x is never exactly 0).
  // Exact: the gradient is the mask times a gradient of ones, one rounding-free product per element.
  const auto mask = at::where(y.detach() == 0, at::zeros_like(y), at::full_like(y, 1.0 / 0.75));
  EXPECT_TRUE(at::equal(x.grad(), mask));
  EXPECT_TRUE(at::equal(yoke::dropout(x, 0.25, false), x));
  EXPECT_TRUE(at::equal(yoke::dropout(x, 0.0, true), x));
  EXPECT_EQ(yoke::dropout(x, 1.0, true).abs().sum().item<float>(), 0.0f);
}
