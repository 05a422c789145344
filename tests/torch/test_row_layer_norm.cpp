// model/row_layer_norm.h against at::layer_norm, and against its own order of operations written
// out in scalars: whichever clone (AVX-512, AVX2, the baseline) the program picked when it loaded,
// a row must come out as those bits. And model/layers.h's LayerNorm: the kernel without
// gradients, LibTorch's (which has a backward) with them.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "compat/torch.h"
#include "margin.h"
#include "model/layers.h"
#include "model/row_layer_norm.h"

using namespace yoke;

namespace {

// A row's arithmetic one float at a time: Σx in 16 lanes over blocks of 16 (the tail's missing
// lanes zero) folded in halves, / n; then Σ(x − mean)² the same way; rstd = 1 / √(var + ε); then
// (x − mean) · rstd · γ + β. volatile: no multiply-add fused here either.
std::vector<float> scalar_row(const float* x, const float* w, const float* b, float eps, int64_t n) {
  const auto folded = [](float* lanes) {
    for (int width = 8; width >= 1; width /= 2)
      for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
    return lanes[0];
  };
  float sums[16] = {}, squares[16] = {};
  for (int64_t j = 0; j < n; ++j) sums[j % 16] += x[j];
  const float mean = folded(sums) / float(n);
  for (int64_t j = 0; j < n; ++j) {
    const float d = x[j] - mean;
    volatile float square = d * d;
    squares[j % 16] += square;
  }
  const float rstd = 1.0f / std::sqrt(folded(squares) / float(n) + eps);
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    volatile float scaled = (x[j] - mean) * rstd * w[j];
    y[size_t(j)] = scaled + b[j];
  }
  return y;
}

}  // namespace

TEST(RowLayerNorm, EveryWidthGivesTheScalarOrderBitForBitAndLibTorchsValues) {
  at::NoGradGuard no_grad;
  at::manual_seed(5);
  for (int64_t n : {1, 7, 16, 20, 256, 259}) {  // below a block, blocks only, tails, the models' width
    const auto x = at::randn({5, n}) * 3 + 1, w = at::randn({n}), b = at::randn({n});
    ASSERT_TRUE(row_layer_norm_fits(x, w, b));
    const auto got = row_layer_norm(x, w, b, 1e-5f);
    for (int64_t r = 0; r < 5; ++r) {
      const auto want = scalar_row(x[r].data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), 1e-5f, n);
      for (int64_t j = 0; j < n; ++j) ASSERT_EQ(got[r][j].item<float>(), want[size_t(j)]) << "n " << n << " row " << r << " " << j;
    }
    // Both sum n ≤ 259 terms in other orders: var's relative error ≤ n·2^-24 ≈ 1.6e-5 in the worst
    // order (the mean's moves it less), so rstd's ≤ 8e-6; times |x − mean| · |γ| ≤ 12 · 4 here,
    // about 4e-4 at worst, plus a few ulps of the last steps. 1e-3 covers that bound.
    const auto want = at::layer_norm(x, {n}, w, b, 1e-5);
    YOKE_EXPECT_AT_MOST((got - want).abs().max().item<double>(), 1e-3) << "n " << n;
  }
}

TEST(RowLayerNorm, LayerNormUsesItWithoutGradientsAndLibTorchWithThem) {
  LayerNorm norm(20);
  {
    at::NoGradGuard no_grad;
    norm.weight.uniform_(0.5, 1.5);
    norm.bias.uniform_(-0.5, 0.5);
  }
  const auto x = at::randn({3, 4, 20});  // a [B, T, d] batch: rows over the first two dimensions
  at::Tensor inference;
  {
    at::NoGradGuard no_grad;
    EXPECT_TRUE(row_layer_norm_fits(x, norm.weight, norm.bias));
    inference = norm(x);
    EXPECT_TRUE(inference.equal(row_layer_norm(x, norm.weight, norm.bias, 1e-5f)));
  }
  EXPECT_FALSE(row_layer_norm_fits(x, norm.weight, norm.bias));
  const auto trained = norm(x);
  ASSERT_TRUE(trained.requires_grad());
  trained.sum().backward();
  EXPECT_TRUE(norm.weight.grad().defined());
  EXPECT_TRUE(trained.allclose(inference, 1e-5, 1e-5));  // 20 terms: far inside the bound above
}
