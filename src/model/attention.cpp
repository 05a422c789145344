#include "model/attention.h"

#include <cmath>

#include "model/fp32_matmul.h"
#include "model/init.h"
#include "model/single_query_attention.h"

namespace yoke {

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
  if (q.size(1) == 1 && q.device().is_cpu() && q.scalar_type() == at::kFloat && kv.k.scalar_type() == at::kFloat &&
      !is_training() && !at::GradMode::is_enabled()) {
    ctx = single_query_attention(q, kv.k, kv.v, mask, heads_);  // a decoding step
  } else {
    ctx = compat::attention(split_heads(q), kv.k, kv.v, mask, dropout_, is_training());
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
  if (cache) {
    if (cache->k.defined()) {
      kv.k = at::cat({cache->k, kv.k}, 2);
      kv.v = at::cat({cache->v, kv.v}, 2);
    }
    cache->k = kv.k;
    cache->v = kv.v;
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
    auto scores = at::matmul(split_heads(q), memory.k.transpose(-2, -1)).mul_(1.0 / std::sqrt(double(dim_ / heads_)));
    if (mask.defined()) scores.add_(mask);
    auto summed = at::softmax(scores, -1).sum(1);
    *weights = weights->defined() ? *weights + summed : summed;
  }
  return attend(q, memory, mask);
}

}  // namespace yoke
