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

// Writes x [B, H, 1, d_head] at position `pos` of room [slots, H, room, d_head], batch row b in row b.
void write_position(at::Tensor& room, int64_t pos, const at::Tensor& x) {
  const auto src = x.stride(3) == 1 ? x : x.contiguous();
  const int64_t batch = src.size(0), heads = src.size(1), dh = src.size(3);
  float* dst = room.data_ptr<float>() + pos * room.stride(2);  // row 0, head 0 at `pos`
  const float* from = src.data_ptr<float>();
  const int64_t row = room.stride(0), head = room.stride(1);
  constexpr int64_t kAhead = 4, kLine = 16;  // rows prefetched ahead; floats a cache line
  for (int64_t b = 0; b < batch; ++b) {
    if (b + kAhead < batch)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t c = 0; c < dh; c += kLine) __builtin_prefetch(dst + (b + kAhead) * row + h * head + c, 1, 3);
    for (int64_t h = 0; h < heads; ++h)
      std::memcpy(dst + b * row + h * head, from + b * src.stride(0) + h * src.stride(1), size_t(dh) * sizeof(float));
  }
}

// Copies positions [0, len) of row `from` of room `src` to row `to` of room `dst` (both [slots, H, room, d_head]).
void copy_row(at::Tensor& dst, int64_t to, const at::Tensor& src, int64_t from, int64_t len) {
  const float* s = src.data_ptr<float>();
  float* d = dst.data_ptr<float>();
  for (int64_t h = 0; h < src.size(1); ++h)
    std::memcpy(d + to * dst.stride(0) + h * dst.stride(1), s + from * src.stride(0) + h * src.stride(1),
                size_t(len * src.size(3)) * sizeof(float));
}

// Appends one new position k, v [B, H, 1, d_head] to the cache in place, growing its room when it
// has too few positions or rows. A grown room keeps only the rows that some batch row still
// reads, renumbered; a plain cache taken over moves in batch order.
void append_in_place(KeyValues& cache, const at::Tensor& k, const at::Tensor& v) {
  const int64_t used = cache.k.defined() ? cache.k.size(2) : 0, batch = k.size(0);
  const bool in_room = cache.k_room.defined();
  TORCH_CHECK(!in_room || cache.room_batch() == batch, "KeyValues: a step of ", batch, " rows on a cache of ",
              cache.room_batch());
  if (!in_room || used + 1 > cache.k_room.size(2) || batch > cache.k_room.size(0)) {
    const int64_t room = (used + 1 + kRoomStep - 1) / kRoomStep * kRoomStep;
    std::vector<int64_t> position_rows(size_t(batch * room), 0), renumbered;
    int64_t kept = 0;
    if (in_room) {
      const int64_t old_room = cache.k_room.size(2);
      renumbered.assign(size_t(cache.k_room.size(0)), -1);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < used; ++t) {
          int64_t& r = renumbered[size_t(cache.position_rows[size_t(b * old_room + t)])];
          if (r < 0) r = kept++;
          position_rows[size_t(b * room + t)] = r;
        }
    }
    auto grown = [&](const at::Tensor& like) {
      return at::empty({std::max(batch, kept), like.size(1), room, like.size(3)}, like.options());
    };
    auto k_room = grown(k), v_room = grown(v);
    if (in_room) {
      for (size_t r = 0; r < renumbered.size(); ++r)
        if (renumbered[r] >= 0) {
          copy_row(k_room, renumbered[r], cache.k_room, int64_t(r), used);
          copy_row(v_room, renumbered[r], cache.v_room, int64_t(r), used);
        }
    } else if (used) {
      k_room.narrow(0, 0, batch).narrow(2, 0, used).copy_(cache.batch_k());
      v_room.narrow(0, 0, batch).narrow(2, 0, used).copy_(cache.batch_v());
      for (int64_t b = 0; b < batch; ++b) std::fill_n(position_rows.begin() + b * room, used, b);
    }
    cache.k_room = k_room, cache.v_room = v_room;
    cache.position_rows = std::move(position_rows);
    cache.rows.clear();
  }
  write_position(cache.k_room, used, k);
  write_position(cache.v_room, used, v);
  const int64_t room = cache.k_room.size(2);
  for (int64_t b = 0; b < batch; ++b) cache.position_rows[size_t(b * room + used)] = b;
  cache.k = cache.k_room.narrow(2, 0, used + 1);
  cache.v = cache.v_room.narrow(2, 0, used + 1);
}

}  // namespace

at::Tensor KeyValues::in_batch_order(const at::Tensor& t) const {
  if (k_room.defined()) {
    // Each (row, position) from the row that holds it: [B, H, T, d_head] in batch order.
    const int64_t batch = room_batch(), room = k_room.size(2), len = t.size(2), heads = t.size(1), dh = t.size(3);
    auto out = at::empty({batch, heads, len, dh}, t.options());
    const auto src = t.stride(3) == 1 ? t : t.contiguous();
    const float* from = src.data_ptr<float>();
    float* to = out.data_ptr<float>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t p = 0; p < len; ++p)
          std::memcpy(to + ((b * heads + h) * len + p) * dh,
                      from + position_rows[size_t(b * room + p)] * src.stride(0) + h * src.stride(1) + p * src.stride(2),
                      size_t(dh) * sizeof(float));
    return out;
  }
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
  const int64_t count = idx.numel();
  if (k_room.defined()) {
    // Row b' continues batch row p[b']: its positions are where that row's are.
    const int64_t room = k_room.size(2), batch = room_batch(), used = k.size(2);
    std::vector<int64_t> next(size_t(count * room), 0);
    for (int64_t b = 0; b < count; ++b) {
      TORCH_CHECK(p[b] >= 0 && p[b] < batch, "KeyValues::keep_rows: row ", p[b], " of ", batch);
      std::copy_n(position_rows.begin() + p[b] * room, used, next.begin() + b * room);
    }
    position_rows = std::move(next);
    return;
  }
  // Nothing writes into k and v outside a room (the plain cache is rebuilt by at::cat, the
  // encoder's memory is read only), so a row may be read by several batch rows.
  std::vector<int64_t> next(static_cast<size_t>(count));
  for (size_t i = 0; i < next.size(); ++i) next[i] = rows.empty() ? p[i] : rows[size_t(p[i])];
  rows = std::move(next);
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
    if (kv.k_room.defined()) {  // a decoding step over its own cache
      const PositionRows positions{kv.position_rows.data(), kv.k_room.size(2)};
      ctx = single_query_attention(q, kv.k, kv.v, mask, heads_, {}, &positions);
    } else {  // a decoding step's cross-attention
      ctx = single_query_attention(q, kv.k, kv.v, mask, heads_, kv.rows);
    }
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
    cache->position_rows.clear();
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
