// model/batched_product.h against at::matmul, forward and backward, on the strided views
// attention gives it (heads split out of a fused q/k/v product, keys transposed).
#include <gtest/gtest.h>

#include <cmath>

#include <torch/csrc/autograd/autograd.h>

#include "compat/torch.h"
#include "model/batched_product.h"

using namespace yoke;

namespace {

// Two fp32 products of K terms summed in different orders differ by at most 2·K·u·Σ|a||b|
// (u = 2^-24, the rounding of each sum; Higham's γ_K for each side): the bound per element.
void expect_same_product(const at::Tensor& got, const at::Tensor& a, const at::Tensor& b, const at::Tensor& want) {
  const double k = double(a.size(-1));
  const auto bound = at::matmul(a.abs(), b.abs()) * (2.0 * k * std::ldexp(1.0, -24));
  EXPECT_TRUE(((got - want).abs() <= bound).all().item<bool>())
      << "largest difference " << (got - want).abs().max().item<float>() << " against bounds up to "
      << bound.max().item<float>();
}

}  // namespace

TEST(BatchedProduct, AttentionsProductsMatchMatmulForwardAndBackward) {
  if (!batched_product_fits(at::ones({1, 1, 1}), at::ones({1, 1, 1}))) GTEST_SKIP() << "this build has no oneDNN";
  at::manual_seed(3);
  const int64_t b = 5, t = 7, s = 9, heads = 4, dh = 16;
  // q from a fused [B, T, 3·H·dh] product, k and v from a [B, S, 2·H·dh] one, split into heads.
  const auto qkv = at::randn({b, t, 3 * heads * dh}).requires_grad_(true);
  const auto kv = at::randn({b, s, 2 * heads * dh}).requires_grad_(true);
  const auto split = [&](const at::Tensor& x) { return x.view({x.size(0), x.size(1), heads, dh}).transpose(1, 2); };
  const auto q = split(qkv.narrow(-1, 0, heads * dh));
  const auto k = split(kv.narrow(-1, 0, heads * dh)), v = split(kv.narrow(-1, heads * dh, heads * dh));

  ASSERT_TRUE(batched_product_fits(q, k.transpose(-2, -1)));
  const auto scores = batched_product(q, k.transpose(-2, -1));
  const auto probs = at::softmax(scores, -1);
  const auto out = batched_product(probs, v, q);  // laid out as q: the heads merge back by a view
  EXPECT_TRUE(out.transpose(1, 2).is_contiguous());
  // Another destination layout may take another oneDNN kernel, summing in another order.
  expect_same_product(out, probs, v, batched_product(probs, v));
  const auto want_scores = at::matmul(q, k.transpose(-2, -1));
  const auto want_out = at::matmul(at::softmax(want_scores, -1), v);
  expect_same_product(scores, q, k.transpose(-2, -1), want_scores);
  EXPECT_TRUE(at::allclose(out, want_out, 1e-5, 1e-5)) << (out - want_out).abs().max().item<float>();

  // Gradients through both products, to the fused projections' outputs.
  const auto w = at::randn(out.sizes());
  const auto want = torch::autograd::grad({(want_out * w).sum()}, {qkv, kv});
  const auto got = torch::autograd::grad({(out * w).sum()}, {qkv, kv});
  // Sums of a few dozen terms of size ~1, taken in other orders through softmax's backward: 1e-4
  // is ~100 float spacings at these magnitudes, far below a wrong transpose (differences of ~1).
  for (size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(at::allclose(got[i], want[i], 1e-4, 1e-4)) << i << ": " << (got[i] - want[i]).abs().max().item<float>();
  batched_product(q, k.transpose(-2, -1)).sum().backward();  // sum's gradient arrives expanded (stride 0)
  const auto want_q_grad = at::matmul(at::ones({b, heads, t, s}), k.detach());
  EXPECT_TRUE(at::allclose(qkv.grad().narrow(-1, 0, heads * dh), want_q_grad.transpose(1, 2).reshape({b, t, heads * dh}),
                           1e-5, 1e-5));
}

TEST(BatchedProduct, OnlyMatchingFp32CpuBatchesFit) {
  if (!batched_product_fits(at::ones({1, 1, 1}), at::ones({1, 1, 1}))) GTEST_SKIP() << "this build has no oneDNN";
  EXPECT_TRUE(batched_product_fits(at::ones({2, 3, 4}), at::ones({2, 4, 5})));
  EXPECT_FALSE(batched_product_fits(at::ones({2, 3, 4}), at::ones({1, 4, 5})));  // no broadcasting
  EXPECT_FALSE(batched_product_fits(at::ones({2, 3, 4}), at::ones({2, 5, 5})));  // K differs
  EXPECT_FALSE(batched_product_fits(at::ones({3, 4}), at::ones({4, 5})));        // no batch
  EXPECT_FALSE(batched_product_fits(at::ones({2, 3, 4}, at::kDouble), at::ones({2, 4, 5}, at::kDouble)));
  EXPECT_FALSE(batched_product_fits(at::ones({2, 0, 4}), at::ones({2, 4, 5})));
}
