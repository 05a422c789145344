// experiment/convergence.h: the slope rule that says whether a run's validation loss has stopped
// falling. Curves are written by hand here; docs/statistics.md applies the rule to the committed runs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "experiment/convergence.h"

namespace yoke {
namespace {

std::vector<double> every_100(size_t n) {
  std::vector<double> u;
  for (size_t i = 1; i <= n; ++i) u.push_back(100.0 * double(i));
  return u;
}

TEST(Convergence, ACurveStillFallingHalfAPercentAValidationHasNotConverged) {
  // seed004-lm-converged-cpu's tied seed 1: the last five validations fall 0.45% each.
  std::vector<double> loss;
  for (int i = 0; i < 8; ++i) loss.push_back(5.3 * std::pow(1 - 0.0045, i));
  const Plateau p = loss_plateau(every_100(8), loss);
  EXPECT_FALSE(p.converged) << p.why;
  EXPECT_NEAR(p.decline, 4 * 0.0045, 0.001);  // four intervals in the window
}

TEST(Convergence, AFlatNoisyCurveHasConverged) {
  const std::vector<double> loss = {5.2, 5.1, 5.05, 5.041, 5.043, 5.039, 5.042, 5.040};
  const Plateau p = loss_plateau(every_100(8), loss);
  EXPECT_TRUE(p.converged) << p.why;
  EXPECT_LT(p.decline_bound, kMaxDecline);
}

TEST(Convergence, NoiseWidensTheBoundUntilTheRuleCannotPass) {
  // Flat on average, but so noisy that a decline of 0.5% cannot be excluded from five points.
  const std::vector<double> loss = {5.0, 5.15, 4.9, 5.1, 4.95};
  const Plateau p = loss_plateau(every_100(5), loss);
  EXPECT_FALSE(p.converged) << p.why;
  // And a rising loss (over-fitting) has stopped falling.
  const Plateau up = loss_plateau(every_100(6), {4.0, 4.01, 4.02, 4.03, 4.04, 4.05});
  EXPECT_TRUE(up.converged) << up.why;
}

TEST(Convergence, FewerValidationsThanTheWindowShowNoPlateau) {
  const Plateau p = loss_plateau(every_100(4), {5.0, 5.0, 5.0, 5.0});
  EXPECT_FALSE(p.converged);
  EXPECT_NE(p.why.find("fewer than the 5"), std::string::npos) << p.why;
}

}  // namespace
}  // namespace yoke
