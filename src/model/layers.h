// Transformer layers (Vaswani et al. 2017), pre-norm or post-norm, and position encodings. A
// layer's self-attention may be replaced by a convolution block (Wu et al. 2019; model/conv_block.h).
#pragma once
#include <optional>

#include "compat/torch.h"
#include "model/attention.h"
#include "model/conv_block.h"
#include "model/dropout.h"

namespace yoke {

struct LayerSpec {
  int64_t dim = 256, heads = 4, ffn_dim = 1024;
  double dropout = 0.1, attention_dropout = 0.0, activation_dropout = 0.0;
  bool pre_norm = true;
};

class LayerNorm : public torch::nn::Module {
 public:
  explicit LayerNorm(int64_t dim);
  at::Tensor operator()(const at::Tensor& x) const;
  at::Tensor weight, bias;
};

class FeedForward : public torch::nn::Module {
 public:
  FeedForward(int64_t dim, int64_t hidden, double activation_dropout);
  at::Tensor operator()(const at::Tensor& x);
  // int8 products from weights[prefix + "w1"] and [prefix + "w2"] (see MultiheadAttention).
  void use_int8(const Int8Weights& weights, const std::string& prefix);
  void use_packed_fp32();  // see MultiheadAttention
  at::Tensor w1, b1, w2, b2;

 private:
  std::shared_ptr<const DecodingLinear> w1_packed_, w2_packed_;  // set by use_int8 or use_packed_fp32
  double activation_dropout_;
};

// One residual sub-layer: x + dropout(f(norm(x))) (pre) or norm(x + dropout(f(x))) (post).
class Residual {
 public:
  Residual(const LayerSpec& s, const LayerNorm& norm, bool training) : s_(s), norm_(norm), training_(training) {}
  template <class F>
  at::Tensor operator()(const at::Tensor& x, F&& f) const {
    auto y = f(s_.pre_norm ? norm_(x) : x);
    y = yoke::dropout(y, s_.dropout, training_);
    return s_.pre_norm ? x + y : norm_(x + y);
  }

 private:
  const LayerSpec& s_;
  const LayerNorm& norm_;
  bool training_;
};

// `conv`: a convolution block in place of self-attention (its causal flag is set by the layer).
class EncoderLayer : public torch::nn::Module {
 public:
  explicit EncoderLayer(const LayerSpec& spec, const std::optional<ConvBlockSpec>& conv = std::nullopt);
  at::Tensor forward(const at::Tensor& x, const at::Tensor& pad_mask);
  // int8 products for the attention and feed-forward weights under `prefix` ("encoder0.");
  // a convolution block keeps its fp32 products.
  void use_int8(const Int8Weights& weights, const std::string& prefix);
  void use_packed_fp32();

 private:
  LayerSpec spec_;
  std::shared_ptr<MultiheadAttention> attn_;
  std::shared_ptr<ConvBlock> conv_;
  std::shared_ptr<FeedForward> ffn_;
  std::shared_ptr<LayerNorm> norm_attn_, norm_ffn_;
};

class DecoderLayer : public torch::nn::Module {
 public:
  DecoderLayer(const LayerSpec& spec, bool cross_attention, const std::optional<ConvBlockSpec>& conv = std::nullopt);
  // memory: the encoder's keys/values for this layer (undefined k for a language model).
  // Incremental decoding passes the layer's cache: self_cache (attention) or conv_buffer
  // (convolution: its last K − 1 inputs), whichever the layer has. `cross_weights`: see
  // MultiheadAttention::cross_attend.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& self_mask, const KeyValues& memory,
                     const at::Tensor& memory_mask, KeyValues* self_cache = nullptr, at::Tensor* conv_buffer = nullptr,
                     at::Tensor* cross_weights = nullptr);
  KeyValues project_memory(const at::Tensor& memory) const { return cross_->project_memory(memory); }
  bool has_cross() const { return static_cast<bool>(cross_); }
  void use_int8(const Int8Weights& weights, const std::string& prefix);  // as EncoderLayer's
  void use_packed_fp32();

 private:
  LayerSpec spec_;
  std::shared_ptr<MultiheadAttention> self_, cross_;
  std::shared_ptr<ConvBlock> conv_;
  std::shared_ptr<FeedForward> ffn_;
  std::shared_ptr<LayerNorm> norm_self_, norm_cross_, norm_ffn_;
};

// Sinusoidal encodings [max_len, dim] (Vaswani et al. §3.5).
at::Tensor sinusoidal_positions(int64_t max_len, int64_t dim);

}  // namespace yoke
