// decode/row_log_softmax.h against at::log_softmax, and against its own order of operations
// written out in scalars: whichever clone (AVX-512, AVX2, the baseline) the program picked when it
// loaded, a row must come out as those bits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "decode/row_log_softmax.h"
#include "margin.h"
#include "util/float_vectors.h"

using namespace yoke;

namespace {

// The row's arithmetic one float at a time: the maximum, e^(x − max) by row_exp summed in 16
// lanes over blocks of 16 and folded in halves, then (x − max) − log Σ.
std::vector<float> scalar_row(const std::vector<float>& x) {
  float top = -INFINITY;
  for (float v : x) top = v > top ? v : top;
  float lanes[16] = {};
  for (size_t j = 0; j < x.size(); ++j) lanes[j % 16] += row_exp(x[j] - top);
  for (int width = 8; width >= 1; width /= 2)
    for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
  const float log_sum = std::log(lanes[0]);
  std::vector<float> out;
  for (float v : x) out.push_back((v - top) - log_sum);
  return out;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// The AVX-512 rows' exponential (util/float_vectors.h) on 16 floats.
__attribute__((target("avx512f"))) void exps_avx512(const float* x, float* out) {
  float_vectors::store16(out, float_vectors::exp_poly_avx512(float_vectors::load16(x)));
}
#endif

}  // namespace

TEST(RowLogSoftmax, ExpIsWithinTwoUlpsOfTheLibrarysOverTheRangeASearchMeets) {
  // x − max lies in (−∞, 0]. Cephes' expf is within 1 ulp in its own tests; 2 ulps (2.4e-7
  // relative) leave room for its clamp's neighbourhood.
  double worst = 0;
  for (float x = -87.0f; x <= 0.0f; x += 0.0137f) {
    const double want = std::exp(double(x)), got = row_exp(x);
    worst = std::max(worst, std::abs(got - want) / want);
  }
  YOKE_EXPECT_AT_MOST(worst, 2.4e-7);
  EXPECT_EQ(row_exp(0.0f), 1.0f);
  EXPECT_LT(row_exp(-std::numeric_limits<float>::infinity()), 2e-38f);  // e^-87 stands for e^-inf
  EXPECT_TRUE(std::isnan(row_exp(NAN)));
}

TEST(RowLogSoftmax, EveryLengthGivesTheScalarOrderBitForBitAndLibTorchsValues) {
  at::manual_seed(3);
  for (int64_t n : {1, 5, 16, 17, 40, 8000, 8003}) {  // below a block, blocks only, tails, a vocabulary
    auto x = at::randn({3, n}) * 6;
    if (n > 1) x[1][0] = -std::numeric_limits<float>::infinity();  // a word a search ruled out
    const auto want = at::log_softmax(x, -1);
    auto got = log_softmax_in_place(x.clone());
    for (int64_t r = 0; r < 3; ++r) {
      const auto row = x[r].contiguous();
      const auto scalar = scalar_row(std::vector<float>(row.data_ptr<float>(), row.data_ptr<float>() + n));
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(got[r][j].item<float>(), scalar[size_t(j)]) << "n " << n << " row " << r << " " << j;
    }
    if (n > 1) EXPECT_TRUE(std::isinf(got[1][0].item<float>()));
    // Both sum up to 8003 terms of at most 1 in other orders (each sum's rounding ≤ n·2^-24 ≈
    // 5e-4 relative at n = 8003, in the worst order; log of it moves by as much), and e^ differs
    // by 2 ulps: 1e-3 is the bound at n = 8003, scaled down with n.
    const double bound = 1e-6 + 1.3e-7 * double(n);
    YOKE_EXPECT_AT_MOST((got - want).abs().nan_to_num(0, 0, 0).max().item<double>(), bound) << "n " << n;
  }
}

TEST(RowLogSoftmax, TheAvx512ExponentialGivesTheScalarBits) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 on this processor: its exponential is not used";
  // Every x a search meets (x − max ≤ 0) and beyond, 0.001 apart, and the edges of each step:
  // the clamps (−87, 88), where x·log2(e) + 0.5 is a whole number (the floor's edge), −inf, NaN.
  std::vector<float> x;
  for (float v = -120.0f; v <= 100.0f; v += 0.001f) x.push_back(v);
  for (float edge : {-87.0f, 88.0f, (-1.0f - 0.5f) / 1.44269504088896341f, (-125.0f - 0.5f) / 1.44269504088896341f,
                     (126.0f - 0.5f) / 1.44269504088896341f})
    for (float v : {edge, std::nextafter(edge, -200.0f), std::nextafter(edge, 200.0f)}) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    x.push_back(v);
  while (x.size() % 16) x.push_back(-1.0f);
  std::vector<float> got(x.size());
  for (size_t j = 0; j < x.size(); j += 16) exps_avx512(&x[j], &got[j]);
  // Exact, not within a tolerance: the versions of the row are one computation (the same
  // operations, rounded alike) and must give the same bits, so that a search's translations do not
  // depend on which version the processor loads (docs/testing.md).
  for (size_t j = 0; j < x.size(); ++j) {
    const float want = row_exp(x[j]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[j])) << "x " << x[j];
    } else {
      ASSERT_EQ(got[j], want) << "x " << x[j];
    }
  }
#else
  GTEST_SKIP() << "GCC on x86-64 only";
#endif
}

TEST(RowLogSoftmax, ANaNMakesItsRowNaNAndOtherTensorsGoToLibTorch) {
  auto x = at::randn({2, 40});
  x[0][33] = NAN;
  const auto got = log_softmax_in_place(x.clone());
  EXPECT_TRUE(got[0].isnan().all().item<bool>());
  EXPECT_FALSE(got[1].isnan().any().item<bool>());
  // In place for fp32 contiguous rows; a double tensor or a transposed one is LibTorch's, untouched.
  auto y = at::randn({4, 40});
  const auto same = log_softmax_in_place(y);
  EXPECT_EQ(same.data_ptr<float>(), y.data_ptr<float>());
  auto t = at::randn({40, 4}).t();
  const auto copy = t.clone();
  EXPECT_TRUE(log_softmax_in_place(t).allclose(at::log_softmax(copy, -1)));
  EXPECT_TRUE(t.equal(copy));
  auto d = at::randn({2, 9}, at::kDouble);
  EXPECT_TRUE(log_softmax_in_place(d).equal(at::log_softmax(d, -1)));
}
