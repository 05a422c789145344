// The self-attention cache of a decoding step on the CPU (model/attention.h, KeyValues): a step
// writes its position into room kept ahead, and reordering copies only the rows' position table:
// the children of a parent read their common positions where the parent wrote them. Each step is
// checked against the same arithmetic on a cache rebuilt the plain way (at::cat, index_select):
// the same operators in the same order, so equality is exact.
#include <gtest/gtest.h>

#include <set>

#include "model/attention.h"
#include "model/single_query_attention.h"

using namespace yoke;

TEST(DecodingCache, InPlaceRoomAndSharedPositionsGiveThePlainCachesResults) {
  at::NoGradGuard no_grad;
  at::manual_seed(11);
  const int64_t dim = 64, heads = 4, dh = dim / heads;
  MultiheadAttention attn(dim, heads, 0.0);
  attn.eval();
  for (auto& p : attn.parameters()) p.normal_(0, 0.2);  // biases too: zeros would hide a bias error
  const auto w = at::cat({attn.q_weight, attn.kv_weight}, 0), b = at::cat({attn.q_bias, attn.kv_bias()}, 0);

  KeyValues cache;
  at::Tensor ref_k, ref_v;  // [B, H, T, dh], contiguous, rebuilt every step
  int64_t rows = 6;
  for (int64_t t = 0; t < 40; ++t) {  // past two room boundaries (16, 32)
    std::vector<int64_t> keep;
    bool grows = t % 16 == 0 && t > 0;  // out of positions
    if (t == 5) keep = {0, 2, 3, 5};                   // two sentences leave
    if (t == 20) keep = {0, 0, 3, 1};                  // a parent continues twice, as in beam search
    if (t == 25) keep = {0, 1, 2, 3, 3, 2, 1, 0}, grows = true;  // more rows than the room has
    if (t == 30) keep = {2, 0, 7};                     // in another order
    if (!keep.empty()) {
      const auto index = at::tensor(keep, at::kLong);
      const void* room = cache.k_room.data_ptr();
      const auto before = cache.position_rows;
      const int64_t stride = cache.k_room.size(2);
      cache.keep_rows(index);
      EXPECT_EQ(cache.k_room.data_ptr(), room) << "step " << t << ": reordering moves no key";
      ASSERT_EQ(cache.room_batch(), int64_t(keep.size())) << "step " << t;
      for (size_t r = 0; r < keep.size(); ++r)
        for (int64_t p = 0; p < t; ++p)
          ASSERT_EQ(cache.position_rows[r * size_t(stride) + size_t(p)], before[size_t(keep[r]) * size_t(stride) + size_t(p)])
              << "step " << t << ": row " << r << " reads its parent's position " << p;
      ref_k = ref_k.index_select(0, index);
      ref_v = ref_v.index_select(0, index);
      rows = int64_t(keep.size());
    }
    const void* room = t > 0 ? cache.k_room.data_ptr() : nullptr;
    const auto x = at::randn({rows, 1, dim});
    const auto got = attn.self_attend(x, at::Tensor(), &cache);
    if (t > 0) EXPECT_EQ(cache.k_room.data_ptr() != room, grows) << "step " << t << ": the room moves only when it is too small";
    // Each row wrote its new position in a row of its own.
    std::set<int64_t> written;
    for (int64_t r = 0; r < rows; ++r) written.insert(cache.position_rows[size_t(r * cache.k_room.size(2) + t)]);
    EXPECT_EQ(int64_t(written.size()), rows) << "step " << t;

    const auto qkv = at::linear(x, w, b).chunk(3, -1);
    const auto k = qkv[1].view({rows, 1, heads, dh}).transpose(1, 2), v = qkv[2].view({rows, 1, heads, dh}).transpose(1, 2);
    ref_k = ref_k.defined() ? at::cat({ref_k, k}, 2) : k.contiguous();
    ref_v = ref_v.defined() ? at::cat({ref_v, v}, 2) : v.contiguous();
    const auto want = at::linear(single_query_attention(qkv[0], ref_k, ref_v, at::Tensor(), heads), attn.out_weight,
                                 attn.out_bias);
    ASSERT_TRUE(got.equal(want)) << "step " << t;
    ASSERT_TRUE(cache.batch_k().equal(ref_k)) << "step " << t;
    ASSERT_TRUE(cache.batch_v().equal(ref_v)) << "step " << t;
    EXPECT_EQ(cache.k_room.size(2), (t + 1 + 15) / 16 * 16) << "room grows by 16 positions";
  }
  // At t = 20 rows 0 and 1 continued row 0: they share its first 20 positions, and a grown room
  // keeps only the rows still read.
  EXPECT_LE(cache.k_room.size(0), 8);
}

TEST(DecodingCache, TrainingAndGradientKeepThePlainCache) {
  at::manual_seed(12);
  MultiheadAttention attn(32, 2, 0.0);
  attn.eval();
  KeyValues cache;
  for (int t = 0; t < 3; ++t) attn.self_attend(at::randn({3, 1, 32}), at::Tensor(), &cache);  // gradient on
  EXPECT_FALSE(cache.k_room.defined());
  EXPECT_EQ(cache.k.size(2), 3);
  // A later step without gradient takes over the plain cache: its positions move into room.
  at::NoGradGuard no_grad;
  const auto before = cache.k.clone();
  attn.self_attend(at::randn({3, 1, 32}), at::Tensor(), &cache);
  ASSERT_TRUE(cache.k_room.defined());
  EXPECT_TRUE(cache.k.narrow(2, 0, 3).equal(before));
}

TEST(SingleQueryAttention, ReadsTheRowsItIsGiven) {
  at::manual_seed(13);
  const int64_t heads = 2, dh = 8;
  const auto k = at::randn({5, heads, 7, dh}), v = at::randn({5, heads, 7, dh}), q = at::randn({3, 1, heads * dh});
  const std::vector<int64_t> rows{4, 0, 2};
  const auto index = at::tensor(rows, at::kLong);
  // The same loop over the same numbers: equal exactly.
  EXPECT_TRUE(single_query_attention(q, k, v, at::Tensor(), heads, rows)
                  .equal(single_query_attention(q, k.index_select(0, index), v.index_select(0, index), at::Tensor(), heads)));
  EXPECT_THROW(single_query_attention(q, k, v, at::Tensor(), heads, {4, 0, 5}), std::logic_error);  // no row 5
  EXPECT_THROW(single_query_attention(q, k, v, at::Tensor(), heads, {4, 0}), std::logic_error);     // 2 rows for 3
}

TEST(DecodingCache, MemoryGatheredOnceGivesTheSameAttentionAndAlignments) {
  // The encoder's memory is renumbered like the self-attention cache; with alignments asked,
  // the decoder gathers it into batch order once per reordering (DecoderState::select) so that
  // the weights stop gathering it every step. Both ways read the same numbers: equal exactly.
  at::NoGradGuard no_grad;
  at::manual_seed(14);
  MultiheadAttention attn(32, 2, 0.0);
  attn.eval();
  for (auto& p : attn.parameters()) p.normal_(0, 0.2);
  KeyValues memory = attn.project_memory(at::randn({4, 9, 32}));
  const auto x = at::randn({3, 1, 32});
  const auto index = at::tensor(std::vector<int64_t>{3, 1, 1}, at::kLong);
  memory.keep_rows(index);
  ASSERT_EQ(memory.rows, (std::vector<int64_t>{3, 1, 1}));  // renumbered, nothing moved
  at::Tensor renumbered_weights, gathered_weights;
  const auto renumbered = attn.cross_attend(x, memory, at::Tensor(), &renumbered_weights);
  const auto k_before = memory.batch_k();
  memory.gather_rows();
  EXPECT_TRUE(memory.rows.empty());
  EXPECT_TRUE(memory.k.equal(k_before));
  const auto gathered = attn.cross_attend(x, memory, at::Tensor(), &gathered_weights);
  EXPECT_TRUE(gathered.equal(renumbered));
  EXPECT_TRUE(gathered_weights.equal(renumbered_weights));
  // A cache that grows in place keeps its rows: gathering it would leave its room behind.
  KeyValues self;
  attn.self_attend(x, at::Tensor(), &self);
  ASSERT_TRUE(self.k_room.defined());
  EXPECT_THROW(self.gather_rows(), c10::Error);
}
