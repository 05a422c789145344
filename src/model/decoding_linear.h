// A linear map packed once for decoding on the CPU, without gradient: y = x·Wᵀ + b, then relu
// where asked, for x [..., K] fp32. The layers hold one where a faster product than at::linear
// was chosen for this process: int8 (model/int8_linear.h) or fp32 on oneDNN (model/fp32_matmul.h).
#pragma once
#include "compat/torch.h"

namespace yoke {

class DecodingLinear {
 public:
  virtual ~DecodingLinear() = default;
  virtual at::Tensor operator()(const at::Tensor& x, bool relu = false) const = 0;
};

}  // namespace yoke
