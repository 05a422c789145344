// model/single_query_attention.h against compat::attention, LibTorch's operators, on the shapes a
// decoding step gives it: a query a row, a contiguous self-attention cache or the strided keys and
// values split_heads makes of the encoder's output, with and without a padding mask.
#include <gtest/gtest.h>

#include <limits>

#include "compat/torch.h"
#include "model/single_query_attention.h"

using namespace yoke;

namespace {

// The two differ in the order of their sums only. A score sums dh = 32 products of N(0, 1)
// values (|q_i k_i| summed: about 25): rounded in any order it is off by at most
// 32 · 2^-24 · 25 ≈ 5e-5, 9e-6 after the 1/√dh scale. An error e in the scores moves a
// softmax-weighted sum of values by at most 2 · max |v| · e, under 9e-5 for |v| < 5, and the
// weighted sums add a few ulps of their own. 1e-4 covers that bound; the dev machine measured 6e-7.
constexpr double kTolerance = 1e-4;

at::Tensor reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                     int64_t heads) {
  const int64_t rows = q.size(0), dim = q.size(2);
  auto qh = q.view({rows, 1, heads, dim / heads}).transpose(1, 2);
  return compat::attention(qh, k, v, mask, 0.0, false).transpose(1, 2).reshape({rows, 1, dim});
}

}  // namespace

TEST(SingleQueryAttention, MatchesLibTorchsAttentionOnACacheAndOnStridedMemory) {
  at::manual_seed(7);
  const int64_t rows = 9, heads = 4, dh = 32, dim = heads * dh;
  for (int64_t len : {1, 5, 17}) {
    // A self-attention cache: contiguous [B, H, T, dh]; q a slice of a fused q/k/v product.
    auto qkv = at::randn({rows, 1, 3 * dim});
    auto q = qkv.narrow(2, 0, dim);
    auto k = at::randn({rows, heads, len, dh}), v = at::randn({rows, heads, len, dh});
    auto got = single_query_attention(q, k, v, at::Tensor(), heads);
    EXPECT_LT((got - reference(q, k, v, at::Tensor(), heads)).abs().max().item<double>(), kTolerance) << "T " << len;

    // Memory keys/values as split_heads leaves them: [B, T, H, dh] transposed, with a padding mask
    // that hides the last positions of some rows.
    auto kv = at::randn({rows, len, 2 * dim}).chunk(2, -1);
    auto mk = kv[0].view({rows, len, heads, dh}).transpose(1, 2), mv = kv[1].view({rows, len, heads, dh}).transpose(1, 2);
    ASSERT_FALSE(mk.is_contiguous());
    auto mask = at::zeros({rows, 1, 1, len});
    for (int64_t b = 0; b < rows; b += 2)
      if (len > 1) mask[b].narrow(-1, len - 1 - b % (len - 1), 1 + b % (len - 1)).fill_(-std::numeric_limits<float>::infinity());
    auto masked = single_query_attention(q, mk, mv, mask, heads);
    EXPECT_LT((masked - reference(q, mk, mv, mask, heads)).abs().max().item<double>(), kTolerance) << "T " << len;
    // A masked position takes no weight at all: changing its value changes nothing.
    if (len > 1) {
      auto mv2 = mv.clone();
      mv2.select(2, len - 1).fill_(1000);
      EXPECT_TRUE(single_query_attention(q, mk, mv2, mask, heads).select(0, 0).equal(masked.select(0, 0)));
    }
  }
}

TEST(SingleQueryAttention, RefusesWhatItCannotRead) {
  auto q = at::randn({2, 1, 8}), k = at::randn({2, 2, 3, 4});
  EXPECT_THROW(single_query_attention(at::randn({2, 2, 8}), k, k, at::Tensor(), 2), std::logic_error);  // 2 queries
  EXPECT_THROW(single_query_attention(q, k, k, at::Tensor(), 4), std::logic_error);                     // dh 2 ≠ 4
  EXPECT_THROW(single_query_attention(q, k.transpose(2, 3), k, at::Tensor(), 2), std::logic_error);     // dh strided
  EXPECT_THROW(single_query_attention(q.to(at::kDouble), k, k, at::Tensor(), 2), std::logic_error);
}
