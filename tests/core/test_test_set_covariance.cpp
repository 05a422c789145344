// eval/test_set_covariance.h against what it replaces: the covariance of runs' corpus scores over
// bootstrap resamples of the sentences, drawn many times, on outputs that sit on the brevity
// penalty's kink (hypotheses as long as the references on average), where linearising fails.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

#include "eval/bleu.h"
#include "eval/test_set_covariance.h"
#include "seed_noise_sim.h"

namespace yoke {
namespace {

double g(double u) { return u >= 0 ? 1.0 : std::exp(1.0 - std::exp(-u)); }

// E[g(m + s z)] by the trapezoid rule on 400,000 steps over ±10 sd: the reference for the
// quadrature (its error, ~1e-11 here, is far below the 1e-9 checked).
double brute_force(double m, double s) {
  const int steps = 400000;
  const double lo = -10, h = 20.0 / steps;
  double sum = 0;
  for (int k = 0; k <= steps; ++k) {
    const double z = lo + k * h, w = (k == 0 || k == steps) ? 0.5 : 1.0;
    sum += w * std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI) * g(m + s * z);
  }
  return sum * h;
}

TEST(TestSetCovariance, BrevityIntegralsMatchABruteForceSum) {
  for (const auto& [m, s] : std::vector<std::pair<double, double>>{{0.0, 0.02}, {-0.01, 0.02}, {0.03, 0.01}, {-0.2, 0.05}}) {
    EXPECT_NEAR(expected_brevity_factor(m, s), brute_force(m, s), 1e-9) << "m " << m << " s " << s;
  }
  EXPECT_NEAR(expected_brevity_factor(-0.1, 0.0), g(-0.1), 1e-15);  // no spread: the point itself (the same formula)
  EXPECT_NEAR(expected_brevity_factor(1.0, 0.01), 1.0, 1e-15);     // 100 sd above the kink
  // Independent: the product of the two; perfectly correlated with itself: E[g²].
  EXPECT_NEAR(expected_brevity_product(0.0, 0.02, -0.01, 0.03, 0.0),
              expected_brevity_factor(0.0, 0.02) * expected_brevity_factor(-0.01, 0.03), 1e-12);
  const int steps = 400000;
  double e_g2 = 0;
  for (int k = 0; k <= steps; ++k) {
    const double z = -10 + k * 20.0 / steps, w = (k == 0 || k == steps) ? 0.5 : 1.0;
    e_g2 += w * std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI) * g(0.01 * z) * g(0.01 * z) * 20.0 / steps;
  }
  EXPECT_NEAR(expected_brevity_product(0.0, 0.01, 0.0, 0.01, 1.0), e_g2, 1e-9);
  EXPECT_NEAR(expected_brevity_product(0.0, 0.01, 0.0, 0.01, 0.999999), e_g2, 1e-6);
}

// Runs of a shared test set whose hypothesis lengths vary around the references' (ratio `ratio`
// on average): three seeds of one system, on the kink, and one shorter system.
std::vector<std::vector<BleuStats>> kink_runs(int sentences, uint64_t seed) {
  sim::Draws d(seed);
  const sim::Noise noise;
  const sim::TestSet t = sim::make_test_set(sentences, d);
  std::vector<double> shift(size_t(sentences), 0.0);
  std::vector<std::vector<BleuStats>> runs;
  for (double ratio : {1.0, 1.0, 1.0, 0.93}) {
    auto run = sim::simulate_run(t, 1.0, shift, noise, d);
    for (auto& s : run) {
      s.sys_len = std::max<int64_t>(1, int64_t(std::lround(double(s.ref_len) * ratio + 2.5 * d.normal())));
      for (int n = 0; n < 4; ++n) {
        const int64_t total = std::max<int64_t>(0, s.sys_len - n);
        s.matches[size_t(n)] = std::min(s.matches[size_t(n)], total);
        s.totals[size_t(n)] = total;
      }
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

TEST(TestSetCovariance, BleuMatchesTheBootstrapOnTheBrevityKink) {
  const auto runs = kink_runs(1000, 5);
  const size_t k = runs.size(), n = runs.front().size();
  const auto cov = bleu_test_set_covariance(runs);
  // The bootstrap: B resamples of the sentences, the same for every run.
  constexpr int kResamples = 20000;
  std::mt19937_64 rng(17);
  std::vector<std::vector<double>> score(kResamples, std::vector<double>(k));
  std::vector<uint32_t> counts(n);
  for (int b = 0; b < kResamples; ++b) {
    std::fill(counts.begin(), counts.end(), 0u);
    for (size_t i = 0; i < n; ++i) ++counts[size_t(rng() % n)];
    for (size_t r = 0; r < k; ++r) {
      BleuStats total;
      for (size_t i = 0; i < n; ++i)
        for (uint32_t c = 0; c < counts[i]; ++c) total += runs[r][i];
      score[size_t(b)][r] = bleu_from_stats(total).score;
    }
  }
  std::vector<double> m(k, 0.0);
  for (const auto& s : score)
    for (size_t r = 0; r < k; ++r) m[r] += s[r] / kResamples;
  double shared = 0;
  for (size_t r = 0; r < k; ++r)
    for (size_t s = 0; s < k; ++s) {
      double c = 0, c2 = 0;
      for (const auto& x : score) {
        const double p = (x[r] - m[r]) * (x[s] - m[s]);
        c += p;
        c2 += p * p;
      }
      c /= kResamples - 1;
      // The bootstrap's own Monte Carlo error of this covariance.
      const double mc_se = std::sqrt(std::max(0.0, c2 / kResamples - c * c) / kResamples);
      // 4 Monte Carlo SEs, plus 6% for what the normal law of P and u leaves out at 1000
      // sentences (their skewness, O(1/√n); measured here: under 3% on every entry).
      EXPECT_NEAR(cov[r][s], c, 4 * mc_se + 0.06 * std::fabs(c)) << "runs " << r << ", " << s << " (MC SE " << mc_se << ")";
      if (r == 0 && s == 1) shared = cov[r][s];
    }
  EXPECT_GT(shared, 0.0);  // two runs on one test set move together
}

}  // namespace
}  // namespace yoke
