// The two kernels of Wu et al. 2019: LightConv, one learned kernel per head shared by the head's
// d/H channels and by every position; DynamicConv, a kernel per position predicted from that
// position's input alone. Both are softmax-normalised over the taps (optional), get DropConnect
// on the normalised kernel in training, and have no bias. depthwise_conv applies them.
#pragma once
#include "compat/torch.h"

namespace yoke {

struct ConvKernelSpec {
  int64_t dim = 256, heads = 4, kernel_size = 3;
  bool dynamic = false;
  bool weight_softmax = true;
  double weight_dropout = 0.0;
};

class ConvKernel : public torch::nn::Module {
 public:
  explicit ConvKernel(const ConvKernelSpec& s) : spec_(s) {}
  // The kernel for the inputs x [B, T, d]: [H, K] (LightConv) or [B, T, H, K] (DynamicConv).
  virtual at::Tensor operator()(const at::Tensor& x) = 0;
  const ConvKernelSpec& spec() const { return spec_; }

 protected:
  at::Tensor normalise(const at::Tensor& w);  // softmax over K, then DropConnect in training
  ConvKernelSpec spec_;
};

class LightConv : public ConvKernel {
 public:
  explicit LightConv(const ConvKernelSpec& s);
  at::Tensor operator()(const at::Tensor& x) override;
  at::Tensor weight;  // [H, K]
};

class DynamicConv : public ConvKernel {
 public:
  explicit DynamicConv(const ConvKernelSpec& s);
  at::Tensor operator()(const at::Tensor& x) override;
  at::Tensor weight;  // [H·K, d]: the linear map from x_t to its kernel
};

std::shared_ptr<ConvKernel> make_conv_kernel(const ConvKernelSpec& s);

}  // namespace yoke
