#include "model/conv_block.h"

#include <cmath>

#include "model/init.h"

namespace yoke {

ConvBlock::ConvBlock(const ConvBlockSpec& s) : spec_(s) {
  const int64_t d = s.kernel.dim, in_out = s.glu ? 2 * d : d;
  in_weight = register_parameter("in_weight", xavier_uniform(in_out, d));
  in_bias = register_parameter("in_bias", at::zeros({in_out}));
  conv = register_module(s.kernel.dynamic ? "dynamic_conv" : "light_conv", make_conv_kernel(s.kernel));
  out_weight = register_parameter("out_weight", xavier_uniform(d, d));
  out_bias = register_parameter("out_bias", at::zeros({d}));
}

at::Tensor ConvBlock::forward(const at::Tensor& x, const at::Tensor& pad, at::Tensor* buffer) {
  auto u = at::linear(x, in_weight, in_bias);
  if (spec_.glu) u = at::glu(u, -1);
  if (pad.defined()) u = u.masked_fill(pad, 0);
  const int64_t k = spec_.kernel.kernel_size;
  at::Tensor y;
  if (buffer) {
    TORCH_CHECK(spec_.causal && x.size(1) == 1, "incremental convolution: a causal block, one position a step");
    auto past = buffer->defined() ? *buffer : at::zeros({u.size(0), k - 1, u.size(2)}, u.options());
    auto window = at::cat({past, u}, 1);  // the last K inputs, oldest first
    y = depthwise_conv_last(window, (*conv)(u));
    *buffer = window.narrow(1, 1, k - 1);
  } else {
    y = depthwise_conv(u, (*conv)(u), spec_.causal ? k - 1 : k / 2);
  }
  return at::linear(y, out_weight, out_bias);
}

}  // namespace yoke
