#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/batched_product.h"
#include "model/dropout.h"
#include "model/fp32_matmul.h"
#include "model/init.h"
#include "model/single_query_attention.h"

namespace yoke {
namespace {

// Float on the CPU without gradient: model/single_query_attention.h's kernels may run.
bool is_cpu_inference(const at::Tensor& x, bool training) {
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && !training && !at::GradMode::is_enabled();
}

// A decoding step on the CPU: one new position a row, no gradient. Such steps take
// single_query_attention, which reads keys and values through their strides.
bool is_cpu_decoding_step(const at::Tensor& x, bool training) { return x.size(1) == 1 && is_cpu_inference(x, training); }

// Positions of room a cache grows by: a step writes its own position only, and the cache moves
// once per kRoomStep steps (before: every step, by at::cat), keeping only the rows still used.
constexpr int64_t kRoomStep = 16;

at::Tensor rows_tensor(const std::vector<int64_t>& rows) { return at::tensor(rows, at::kLong); }

// softmax(q kᵀ/√d + mask) v for q, k, v [B, H, T, d_head] with every product one oneDNN call
// (model/batched_product.h), in place of LibTorch 1.13's bmm; false when they do not fit. LibTorch
// 2.x keeps its fused kernel (compat::attention).
bool attend_by_batched_products(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                                double dropout_p, bool training, at::Tensor& out) {
  if (compat::kTorch2) return false;
  const auto kt = k.transpose(-2, -1);
  // probabilities [B, H, Tq, Tk] · v fits where q · kᵀ does and v is shaped as k.
  if (!batched_product_fits(q, kt) || v.sizes() != k.sizes() || v.scalar_type() != k.scalar_type() ||
      v.device() != k.device())
    return false;
  auto scores = batched_product(q, kt).mul_(1.0 / std::sqrt(double(q.size(-1))));
  if (mask.defined()) scores.add_(mask);
  // Laid out as q, the heads' [B, T, H, d_head] split: the caller merges the heads by a view.
  out = batched_product(yoke::dropout(at::softmax(scores, -1), dropout_p, training), v, q);
  return true;
}

// Writes x [B, H, 1, d_head] at position `pos` of room [B', H, room, d_head], batch row b at row
// rows[b] (empty: b).
void write_position(at::Tensor& room, const std::vector<int64_t>& rows, int64_t pos, const at::Tensor& x) {
  const auto src = x.stride(3) == 1 ? x : x.contiguous();
  const int64_t batch = src.size(0), heads = src.size(1), dh = src.size(3);
  float* dst = room.data_ptr<float>();
  const float* from = src.data_ptr<float>();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t r = rows.empty() ? b : rows[size_t(b)];
    for (int64_t h = 0; h < heads; ++h)
      std::memcpy(dst + r * room.stride(0) + h * room.stride(1) + pos * room.stride(2),
                  from + b * src.stride(0) + h * src.stride(1), size_t(dh) * sizeof(float));
  }
}

// Appends one new position k, v [B, H, 1, d_head] to the cache in place, growing its room when full.
void append_in_place(KeyValues& cache, const at::Tensor& k, const at::Tensor& v) {
  const int64_t used = cache.k.defined() ? cache.k.size(2) : 0;
  if (!cache.k_room.defined() || used + 1 > cache.k_room.size(2)) {
    const int64_t room = (used + 1 + kRoomStep - 1) / kRoomStep * kRoomStep;
    auto grown = [&](const at::Tensor& like) {
      return at::empty({like.size(0), like.size(1), room, like.size(3)}, like.options());
    };
    auto k_room = grown(k), v_room = grown(v);
    if (used) {
      k_room.narrow(2, 0, used).copy_(cache.batch_k());
      v_room.narrow(2, 0, used).copy_(cache.batch_v());
    }
    cache.k_room = k_room, cache.v_room = v_room;
    cache.rows.clear();
  }
  write_position(cache.k_room, cache.rows, used, k);
  write_position(cache.v_room, cache.rows, used, v);
  cache.k = cache.k_room.narrow(2, 0, used + 1);
  cache.v = cache.v_room.narrow(2, 0, used + 1);
}

// Copies the first `len` positions of row `from` of room [B', H, room, d_head] to row `to`.
void copy_positions(at::Tensor& room, int64_t from, int64_t to, int64_t len) {
  float* base = room.data_ptr<float>();
  const size_t bytes = size_t(len * room.size(3)) * sizeof(float);
  for (int64_t h = 0; h < room.size(1); ++h)
    std::memcpy(base + to * room.stride(0) + h * room.stride(1), base + from * room.stride(0) + h * room.stride(1), bytes);
}

}  // namespace

at::Tensor KeyValues::in_batch_order(const at::Tensor& t) const {
  return rows.empty() ? t : t.index_select(0, rows_tensor(rows));
}

void KeyValues::gather_rows() {
  TORCH_CHECK(!k_room.defined(), "KeyValues::gather_rows: a cache that grows in place keeps its rows");
  if (rows.empty()) return;
  k = batch_k();
  v = batch_v();
  rows.clear();
}

void KeyValues::keep_rows(const at::Tensor& index) {
  if (!k.defined()) return;
  if (!k.device().is_cpu()) {
    k = k.index_select(0, index);
    v = v.index_select(0, index);
    return;
  }
  const auto idx = index.to(at::kCPU, at::kLong).contiguous();
  const int64_t* p = idx.data_ptr<int64_t>();
  std::vector<int64_t> next(size_t(idx.numel()));
  for (size_t i = 0; i < next.size(); ++i) next[i] = rows.empty() ? p[i] : rows[size_t(p[i])];
  // Nothing writes into k and v outside their room (the plain cache is rebuilt by at::cat, the
  // encoder's memory is read only), so there a row may be read by several batch rows.
  if (!k_room.defined() || fill_slots(next)) {
    rows = std::move(next);
    return;
  }
  // More rows than the room holds: every row gets a copy.
  const auto keep = rows_tensor(next);
  const int64_t len = k.size(2);
  rows.clear();
  k_room = k_room.index_select(0, keep);
  v_room = v_room.index_select(0, keep);
  k = k_room.narrow(2, 0, len);
  v = v_room.narrow(2, 0, len);
}

bool KeyValues::fill_slots(std::vector<int64_t>& next) {
  // Each row of the room is written by one batch row: the first batch row of a parent keeps its
  // row, every other one (beam search's second child) takes a row no one reads any more, with a
  // copy of its parent's positions. Only those copies move; a beam step no longer copies the cache.
  const int64_t slots = k_room.size(0), len = k.size(2);
  std::vector<char> read(size_t(slots), 0);
  for (int64_t r : next) read[size_t(r)] = 1;
  std::vector<int64_t> spare;
  for (int64_t r = slots - 1; r >= 0; --r)
    if (!read[size_t(r)]) spare.push_back(r);
  const size_t distinct = size_t(std::count(read.begin(), read.end(), char(1)));
  if (next.size() - distinct > spare.size()) return false;
  std::vector<char> taken(size_t(slots), 0);
  for (auto& r : next) {
    if (!taken[size_t(r)]) {
      taken[size_t(r)] = 1;
      continue;
    }
    const int64_t to = spare.back();
    spare.pop_back();
    copy_positions(k_room, r, to, len);
    copy_positions(v_room, r, to, len);
    taken[size_t(to)] = 1;
    r = to;
  }
  return true;
}

MultiheadAttention::MultiheadAttention(int64_t dim, int64_t heads, double dropout)
    : dim_(dim), heads_(heads), dropout_(dropout) {
  q_weight = register_parameter("q_weight", xavier_uniform(dim, dim));
  q_bias = register_parameter("q_bias", at::zeros({dim}));
  kv_weight = register_parameter("kv_weight", at::cat({xavier_uniform(dim, dim), xavier_uniform(dim, dim)}, 0));
  v_bias = register_parameter("v_bias", at::zeros({dim}));
  out_weight = register_parameter("out_weight", xavier_uniform(dim, dim));
  out_bias = register_parameter("out_bias", at::zeros({dim}));
}

at::Tensor MultiheadAttention::kv_bias() const { return at::cat({at::zeros_like(v_bias), v_bias}); }

at::Tensor MultiheadAttention::split_heads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), heads_, dim_ / heads_}).transpose(1, 2);
}

KeyValues MultiheadAttention::project_memory(const at::Tensor& memory) const {
  auto kv = (kv_packed_ ? (*kv_packed_)(memory) : at::linear(memory, kv_weight, kv_bias())).chunk(2, -1);
  return {split_heads(kv[0]), split_heads(kv[1])};
}

at::Tensor MultiheadAttention::attend(const at::Tensor& q, const KeyValues& kv, const at::Tensor& mask) {
  at::Tensor ctx;
  const bool cpu_kernel = is_cpu_inference(q, is_training()) && kv.k.scalar_type() == at::kFloat &&
                          mask_fits_every_query(mask, q.size(0), kv.k.size(2));
  if (cpu_kernel && q.size(1) == 1) {
    ctx = single_query_attention(q, kv.k, kv.v, mask, heads_, kv.rows);  // a decoding step
  } else if (cpu_kernel) {
    ctx = padded_attention(q, kv.batch_k(), kv.batch_v(), mask, heads_);  // an encoder, or a cross-attention
  } else {
    const auto qh = split_heads(q), k = kv.batch_k(), v = kv.batch_v();
    if (!attend_by_batched_products(qh, k, v, mask, dropout_, is_training(), ctx))
      ctx = compat::attention(qh, k, v, mask, dropout_, is_training());
    ctx = ctx.transpose(1, 2).reshape({q.size(0), q.size(1), dim_});
  }
  return out_packed_ ? (*out_packed_)(ctx) : at::linear(ctx, out_weight, out_bias);
}

void MultiheadAttention::use_int8(const Int8Weights& weights, const std::string& prefix) {
  q_packed_ = int8_linear(weights, prefix + "q_weight", q_bias);
  kv_packed_ = int8_linear(weights, prefix + "kv_weight", kv_bias());
  out_packed_ = int8_linear(weights, prefix + "out_weight", out_bias);
  // One scale per output row, so the fused q/k/v rows are the q rows and the k/v rows as they are.
  const auto& q = weights.at(prefix + "q_weight");
  const auto& kv = weights.at(prefix + "kv_weight");
  qkv_packed_ = std::make_shared<const Int8Linear>(
      Int8Weight{at::cat({q.values, kv.values}, 0), at::cat({q.scales, kv.scales}, 0)}, at::cat({q_bias, kv_bias()}, 0),
      int8_kernel());
}

void MultiheadAttention::use_packed_fp32() {
  q_packed_ = std::make_shared<const Fp32Matmul>(q_weight, q_bias);
  kv_packed_ = std::make_shared<const Fp32Matmul>(kv_weight, kv_bias());
  out_packed_ = std::make_shared<const Fp32Matmul>(out_weight, out_bias);
  qkv_packed_ = std::make_shared<const Fp32Matmul>(at::cat({q_weight, kv_weight}, 0), at::cat({q_bias, kv_bias()}, 0));
}

at::Tensor MultiheadAttention::self_attend(const at::Tensor& x, const at::Tensor& mask, KeyValues* cache) {
  // One product for q, k and v. The weights are concatenated on the fly in training (cheap next
  // to a product over thousands of rows); a decoder, which runs one row per sentence a step,
  // concatenates them once per search and keeps them in its cache.
  at::Tensor w, b;
  if (qkv_packed_) {
    // packed decoding: the fused weight is packed once, by use_int8 or use_packed_fp32.
  } else if (cache && cache->qkv_weight.defined()) {
    w = cache->qkv_weight;
    b = cache->qkv_bias;
  } else {
    w = at::cat({q_weight, kv_weight}, 0);
    b = at::cat({q_bias, kv_bias()}, 0);
    if (cache && !at::GradMode::is_enabled()) {
      cache->qkv_weight = w;
      cache->qkv_bias = b;
    }
  }
  auto qkv = (qkv_packed_ ? (*qkv_packed_)(x) : at::linear(x, w, b)).chunk(3, -1);
  KeyValues kv{split_heads(qkv[1]), split_heads(qkv[2])};
  if (cache && is_cpu_decoding_step(x, is_training())) {
    append_in_place(*cache, kv.k, kv.v);
    return attend(qkv[0], *cache, mask);
  }
  if (cache) {
    if (cache->k.defined()) {
      kv.k = at::cat({cache->batch_k(), kv.k}, 2);
      kv.v = at::cat({cache->batch_v(), kv.v}, 2);
    }
    cache->k = kv.k;
    cache->v = kv.v;
    cache->k_room = cache->v_room = at::Tensor();  // k and v no longer live in them
    cache->rows.clear();
  }
  return attend(qkv[0], kv, mask);
}

at::Tensor MultiheadAttention::cross_attend(const at::Tensor& x, const KeyValues& memory, const at::Tensor& mask,
                                            at::Tensor* weights) {
  auto q = q_packed_ ? (*q_packed_)(x) : at::linear(x, q_weight, q_bias);
  if (weights) {
    // The fused attention kernel does not return its probabilities: computed again, only when asked,
    // and without gradient (they choose alignments; nothing differentiates through them).
    at::NoGradGuard no_grad;
    auto scores = at::matmul(split_heads(q), memory.batch_k().transpose(-2, -1)).mul_(1.0 / std::sqrt(double(dim_ / heads_)));
    if (mask.defined()) scores.add_(mask);
    auto summed = at::softmax(scores, -1).sum(1);
    *weights = weights->defined() ? *weights + summed : summed;
  }
  return attend(q, memory, mask);
}

}  // namespace yoke
