// model/single_query_attention.h against compat::attention, LibTorch's operators, on the shapes a
// decoding step gives it: a query a row, a contiguous self-attention cache or the strided keys and
// values split_heads makes of the encoder's output, with and without a padding mask.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "compat/torch.h"
#include "decode/row_log_softmax.h"
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

// The kernel's own order of sums, written out in scalars: eight lanes over blocks of eight, lane i
// + lane i+4, (0 + 2) + (1 + 3), then the tail; no fused multiply-add. Whichever instruction set
// the program picked when it loaded (AVX, or SSE2 on older processors), its result must be these
// bits: decoding then gives the same output on every x86-64 machine.
float ordered_dot(const float* a, const float* b, int64_t n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) {
      volatile float product = a[j + l] * b[j + l];  // volatile: no fused multiply-add here either
      lane[l] += product;
    }
  const float t0 = lane[0] + lane[4], t1 = lane[1] + lane[5], t2 = lane[2] + lane[6], t3 = lane[3] + lane[7];
  float sum = (t0 + t2) + (t1 + t3);
  for (; j < n; ++j) {
    volatile float product = a[j] * b[j];
    sum += product;
  }
  return sum;
}

// One row and head of the kernel in the same order: scores; softmax with Cephes' expf (row_exp, 0
// below −87) summed in 16 lanes folded in halves; then y += w·v in order.
std::vector<float> ordered_head(const float* q, const at::Tensor& k, const at::Tensor& v, int64_t b, int64_t h) {
  const int64_t len = k.size(2), dh = k.size(3);
  const float scale = float(1.0 / std::sqrt(double(dh)));
  std::vector<float> score(static_cast<size_t>(len)), out(static_cast<size_t>(dh), 0.0f);
  float top = -INFINITY, lanes[16] = {};
  for (int64_t t = 0; t < len; ++t) {
    score[size_t(t)] = ordered_dot(q, k[b][h][t].data_ptr<float>(), dh) * scale;
    top = std::max(top, score[size_t(t)]);
  }
  for (int64_t t = 0; t < len; ++t) {
    const float x = score[size_t(t)] - top;
    lanes[t % 16] += (score[size_t(t)] = x < -87.0f ? 0.0f : row_exp(x));
  }
  for (int width = 8; width >= 1; width /= 2)
    for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
  const float inv = 1.0f / lanes[0];
  for (int64_t t = 0; t < len; ++t) {
    const float w = score[size_t(t)] * inv;
    const float* vt = v[b][h][t].data_ptr<float>();
    for (int64_t j = 0; j < dh; ++j) {
      volatile float product = w * vt[j];
      out[size_t(j)] += product;
    }
  }
  return out;
}

}  // namespace

TEST(SingleQueryAttention, ReadsEachPositionFromTheRowItIsGiven) {
  at::manual_seed(17);
  const int64_t heads = 2, dh = 8, len = 7, stride = 9;
  const auto k = at::randn({4, heads, len, dh}), v = at::randn({4, heads, len, dh}), q = at::randn({3, 1, heads * dh});
  std::vector<int64_t> rows(size_t(3 * stride), 0);
  auto gathered_k = at::empty({3, heads, len, dh}), gathered_v = at::empty({3, heads, len, dh});
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t t = 0; t < len; ++t) {
      const int64_t r = (b * 5 + t * 3) % 4;  // positions scattered over the rows
      rows[size_t(b * stride + t)] = r;
      gathered_k.select(0, b).select(1, t).copy_(k.select(0, r).select(1, t));
      gathered_v.select(0, b).select(1, t).copy_(v.select(0, r).select(1, t));
    }
  const PositionRows positions{rows.data(), stride};
  // The same loop over the same numbers: equal exactly.
  EXPECT_TRUE(single_query_attention(q, k, v, at::Tensor(), heads, {}, &positions)
                  .equal(single_query_attention(q, gathered_k, gathered_v, at::Tensor(), heads)));
  rows[5] = 4;  // no row 4
  EXPECT_THROW(single_query_attention(q, k, v, at::Tensor(), heads, {}, &positions), std::logic_error);
  const PositionRows short_rows{rows.data(), len - 1};  // a stride shorter than the positions
  EXPECT_THROW(single_query_attention(q, k, v, at::Tensor(), heads, {}, &short_rows), std::logic_error);
}

TEST(SingleQueryAttention, SumsInOneOrderOnEveryInstructionSet) {
  at::manual_seed(11);
  // dh: blocks of eight only, a tail of four, the reference model's heads. len: keys four at a time
  // and one by one; more than one block of 16 exponentials.
  for (auto [dh, len] : {std::pair<int64_t, int64_t>{16, 7}, {20, 7}, {64, 7}, {64, 37}}) {
    const int64_t rows = 3, heads = 2, dim = heads * dh;
    auto q = at::randn({rows, 1, dim}), k = at::randn({rows, heads, len, dh}), v = at::randn({rows, heads, len, dh});
    const auto got = single_query_attention(q, k, v, at::Tensor(), heads).contiguous();
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        const auto want = ordered_head(q[b][0].data_ptr<float>() + h * dh, k, v, b, h);
        const float* row = got[b][0].data_ptr<float>() + h * dh;
        for (int64_t j = 0; j < dh; ++j) ASSERT_EQ(row[j], want[size_t(j)]) << "dh " << dh << " row " << b << " head " << h;
      }
  }
}

// A beam's hypotheses read their sentence's memory (kv_rows repeat a row). Each row must get its
// own sums in the one order and its own mask, whatever its neighbours read: rows side by side on
// one memory row, a row alone between them, odd key counts and a tail of four.
TEST(SingleQueryAttention, RowsThatShareKeysKeepTheOneOrderOfSums) {
  at::manual_seed(12);
  const std::vector<int64_t> kv_rows = {0, 0, 1, 2, 2, 2, 1};
  for (auto [dh, len] : {std::pair<int64_t, int64_t>{64, 13}, {20, 6}, {64, 1}}) {
    const int64_t rows = int64_t(kv_rows.size()), heads = 3, dim = heads * dh;
    auto q = at::randn({rows, 1, dim}), k = at::randn({3, heads, len, dh}), v = at::randn({3, heads, len, dh});
    const auto mask = at::zeros({rows, 1, 1, len});
    if (len > 2) mask.select(0, 1).narrow(-1, len - 2, 2).fill_(-std::numeric_limits<float>::infinity());
    const auto got = single_query_attention(q, k, v, mask, heads, kv_rows).contiguous();
    for (int64_t b = 0; b < rows; ++b) {
      // Row by row, alone: what each row gives whatever its neighbours.
      const auto alone = single_query_attention(q.narrow(0, b, 1), k.narrow(0, kv_rows[size_t(b)], 1),
                                                v.narrow(0, kv_rows[size_t(b)], 1), mask.narrow(0, b, 1), heads);
      ASSERT_TRUE(got.narrow(0, b, 1).equal(alone)) << "dh " << dh << " len " << len << " row " << b;
      if (b == 1) continue;  // the masked row: ordered_head has no mask
      for (int64_t h = 0; h < heads; ++h) {
        const auto want = ordered_head(q[b][0].data_ptr<float>() + h * dh, k, v, kv_rows[size_t(b)], h);
        const float* row = got[b][0].data_ptr<float>() + h * dh;
        for (int64_t j = 0; j < dh; ++j) ASSERT_EQ(row[j], want[size_t(j)]) << "dh " << dh << " row " << b << " head " << h;
      }
    }
  }
}

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

// padded_attention: every position of q [B, Tq, d] a query, as an encoder's self-attention gives
// them (q, k and v slices of one fused product, split into heads by strides), under a padding mask.
// Each query's result is single_query_attention's for that query alone, bit for bit, and agrees
// with LibTorch's attention to kTolerance (the same bound: the same sums per query).
TEST(SingleQueryAttention, EveryQueryOfAPaddedBatchIsASingleQuerysAttention) {
  at::manual_seed(5);
  const int64_t rows = 4, heads = 4, dh = 20, dim = heads * dh;
  for (int64_t len : {1, 6, 13}) {
    auto qkv = at::randn({rows, len, 3 * dim}).chunk(3, -1);
    auto split = [&](const at::Tensor& x) { return x.view({rows, len, heads, dh}).transpose(1, 2); };
    auto q = qkv[0], k = split(qkv[1]), v = split(qkv[2]);
    auto mask = at::zeros({rows, 1, 1, len});
    for (int64_t b = 1; b < rows && len > 1; ++b) mask[b].narrow(-1, len - b % len, b % len).fill_(-INFINITY);
    const auto got = padded_attention(q, k, v, mask, heads);
    ASSERT_EQ(got.sizes(), (std::vector<int64_t>{rows, len, dim}));
    for (int64_t t = 0; t < len; ++t) {
      const auto one = single_query_attention(q.narrow(1, t, 1), k, v, mask, heads);
      ASSERT_TRUE(got.narrow(1, t, 1).equal(one)) << "T " << len << " query " << t;
    }
    auto want = compat::attention(split(q), k, v, mask, 0.0, false).transpose(1, 2).reshape({rows, len, dim});
    EXPECT_LT((got - want).abs().max().item<double>(), kTolerance) << "T " << len;
  }
  EXPECT_THROW(padded_attention(at::randn({2, 3, 8}), at::randn({2, 2, 3, 4}), at::randn({2, 2, 3, 4}),
                                at::zeros({2, 1, 3, 3}), 2),
               std::logic_error);  // a mask per query (causal) is not a padding mask
}
