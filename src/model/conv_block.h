// The convolution block that replaces self-attention in Wu et al. 2019's LightConv and
// DynamicConv models: input projection d → 2d with a GLU (or a plain d → d projection when the
// GLU is off, their IWSLT setting) → lightweight or dynamic depthwise convolution → output
// projection d → d. Residual, dropout and layer norm are the layer's (model/layers.h).
#pragma once
#include "model/depthwise_conv.h"
#include "model/lightconv.h"

namespace yoke {

struct ConvBlockSpec {
  ConvKernelSpec kernel;
  bool glu = true;
  bool causal = false;  // decoder: padding K − 1; encoder: K / 2 (centred)
};

class ConvBlock : public torch::nn::Module {
 public:
  explicit ConvBlock(const ConvBlockSpec& s);
  // x [B, T, d]; pad [B, T, 1] bool (true at padding; zeroed before the convolution) or undefined.
  // With `buffer` (incremental decoding; causal only), x is one new position [N, 1, d] and
  // *buffer the last K − 1 convolution inputs [N, K − 1, d] (undefined at the start = zeros);
  // it is updated.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& pad = {}, at::Tensor* buffer = nullptr);
  const ConvBlockSpec& spec() const { return spec_; }

  at::Tensor in_weight, in_bias, out_weight, out_bias;
  std::shared_ptr<ConvKernel> conv;

 private:
  ConvBlockSpec spec_;
};

}  // namespace yoke
