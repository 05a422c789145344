#include "model/layers.h"

#include <cmath>

#include "embed/initial_values.h"
#include "model/fp32_matmul.h"
#include "model/row_layer_norm.h"

namespace yoke {

LayerNorm::LayerNorm(int64_t dim) {
  weight = register_parameter("weight", at::ones({dim}));
  bias = register_parameter("bias", at::zeros({dim}));
}

at::Tensor LayerNorm::operator()(const at::Tensor& x) const {
  // Without gradients on the CPU (decoding, validation, scoring): one fixed order of sums on
  // every processor, and a fraction of LibTorch's cost on a decoding step's rows.
  if (row_layer_norm_fits(x, weight, bias)) return row_layer_norm(x, weight, bias, 1e-5f);
  return at::layer_norm(x, {weight.size(0)}, weight, bias, 1e-5);
}

FeedForward::FeedForward(int64_t dim, int64_t hidden, double activation_dropout)
    : activation_dropout_(activation_dropout) {
  const double bound = std::sqrt(6.0 / double(dim + hidden));
  w1 = register_parameter("w1", initial_uniform({hidden, dim}, bound));
  b1 = register_parameter("b1", at::zeros({hidden}));
  w2 = register_parameter("w2", initial_uniform({dim, hidden}, bound));
  b2 = register_parameter("b2", at::zeros({dim}));
}

at::Tensor FeedForward::operator()(const at::Tensor& x) {
  if (w1_packed_) return (*w2_packed_)((*w1_packed_)(x, /*relu=*/true));  // decoding only: no dropout
  auto h = at::relu(at::linear(x, w1, b1));
  h = yoke::dropout(h, activation_dropout_, is_training());
  return at::linear(h, w2, b2);
}

void FeedForward::use_int8(const Int8Weights& weights, const std::string& prefix) {
  w1_packed_ = int8_linear(weights, prefix + "w1", b1);
  w2_packed_ = int8_linear(weights, prefix + "w2", b2);
}

void FeedForward::use_packed_fp32() {
  w1_packed_ = std::make_shared<const Fp32Matmul>(w1, b1);
  w2_packed_ = std::make_shared<const Fp32Matmul>(w2, b2);
}

EncoderLayer::EncoderLayer(const LayerSpec& s, const std::optional<ConvBlockSpec>& conv) : spec_(s) {
  if (conv) {
    auto c = *conv;
    c.causal = false;
    conv_ = register_module("self_conv", std::make_shared<ConvBlock>(c));
  } else {
    attn_ = register_module("self_attn", std::make_shared<MultiheadAttention>(s.dim, s.heads, s.attention_dropout));
  }
  ffn_ = register_module("ffn", std::make_shared<FeedForward>(s.dim, s.ffn_dim, s.activation_dropout));
  norm_attn_ = register_module("self_attn_norm", std::make_shared<LayerNorm>(s.dim));
  norm_ffn_ = register_module("ffn_norm", std::make_shared<LayerNorm>(s.dim));
}

at::Tensor EncoderLayer::forward(const at::Tensor& x, const at::Tensor& pad_mask) {
  auto y = Residual(spec_, *norm_attn_, is_training())(x, [&](const at::Tensor& z) {
    if (!conv_) return attn_->self_attend(z, pad_mask);
    // Padded positions are zeroed before the convolution, so they never leak into real ones.
    return conv_->forward(z, pad_mask.defined() ? pad_mask.view({z.size(0), z.size(1), 1}).lt(0) : at::Tensor());
  });
  return Residual(spec_, *norm_ffn_, is_training())(y, [&](const at::Tensor& z) { return (*ffn_)(z); });
}

void EncoderLayer::use_int8(const Int8Weights& weights, const std::string& prefix) {
  if (attn_) attn_->use_int8(weights, prefix + "self_attn.");
  ffn_->use_int8(weights, prefix + "ffn.");
}

void EncoderLayer::use_packed_fp32() {
  if (attn_) attn_->use_packed_fp32();
  ffn_->use_packed_fp32();
}

DecoderLayer::DecoderLayer(const LayerSpec& s, bool cross_attention, const std::optional<ConvBlockSpec>& conv)
    : spec_(s) {
  if (conv) {
    auto c = *conv;
    c.causal = true;
    conv_ = register_module("self_conv", std::make_shared<ConvBlock>(c));
  } else {
    self_ = register_module("self_attn", std::make_shared<MultiheadAttention>(s.dim, s.heads, s.attention_dropout));
  }
  norm_self_ = register_module("self_attn_norm", std::make_shared<LayerNorm>(s.dim));
  if (cross_attention) {
    cross_ = register_module("cross_attn", std::make_shared<MultiheadAttention>(s.dim, s.heads, s.attention_dropout));
    norm_cross_ = register_module("cross_attn_norm", std::make_shared<LayerNorm>(s.dim));
  }
  ffn_ = register_module("ffn", std::make_shared<FeedForward>(s.dim, s.ffn_dim, s.activation_dropout));
  norm_ffn_ = register_module("ffn_norm", std::make_shared<LayerNorm>(s.dim));
}

at::Tensor DecoderLayer::forward(const at::Tensor& x, const at::Tensor& self_mask, const KeyValues& memory,
                                 const at::Tensor& memory_mask, KeyValues* self_cache, at::Tensor* conv_buffer,
                                 at::Tensor* cross_weights) {
  auto y = Residual(spec_, *norm_self_, is_training())(x, [&](const at::Tensor& z) {
    // The convolution is causal by construction: no mask; padding sits only at the end of a row.
    return conv_ ? conv_->forward(z, at::Tensor(), conv_buffer) : self_->self_attend(z, self_mask, self_cache);
  });
  if (cross_) {
    y = Residual(spec_, *norm_cross_, is_training())(y, [&](const at::Tensor& z) {
      return cross_->cross_attend(z, memory, memory_mask, cross_weights);
    });
  }
  return Residual(spec_, *norm_ffn_, is_training())(y, [&](const at::Tensor& z) { return (*ffn_)(z); });
}

void DecoderLayer::use_int8(const Int8Weights& weights, const std::string& prefix) {
  if (self_) self_->use_int8(weights, prefix + "self_attn.");
  if (cross_) cross_->use_int8(weights, prefix + "cross_attn.");
  ffn_->use_int8(weights, prefix + "ffn.");
}

void DecoderLayer::use_packed_fp32() {
  if (self_) self_->use_packed_fp32();
  if (cross_) cross_->use_packed_fp32();
  ffn_->use_packed_fp32();
}

at::Tensor sinusoidal_positions(int64_t max_len, int64_t dim) {
  auto pos = at::arange(max_len, at::kFloat).unsqueeze(1);
  const int64_t half = dim / 2;
  auto freq = at::exp(at::arange(half, at::kFloat) * (-std::log(10000.0) / double(std::max<int64_t>(half - 1, 1))));
  auto angles = pos * freq.unsqueeze(0);
  auto table = at::cat({at::sin(angles), at::cos(angles)}, 1);
  if (dim % 2) table = at::cat({table, at::zeros({max_len, 1})}, 1);
  return table;
}

}  // namespace yoke
