#include "model/lightconv.h"

#include <cmath>

#include "embed/initial_values.h"
#include "model/dropout.h"

namespace yoke {

at::Tensor ConvKernel::normalise(const at::Tensor& w) {
  // Softmax in fp32 also under a GPU autocast (the kernel of a position sums to one).
  const auto precision = w.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  auto out = spec_.weight_softmax ? at::softmax(w, -1, precision) : w;
  out = yoke::dropout(out, spec_.weight_dropout, is_training());
  return out;
}

LightConv::LightConv(const ConvKernelSpec& s) : ConvKernel(s) {
  // Xavier-uniform as for fairseq's [H, 1, K] weight: fan in K, fan out H·K.
  const double bound = std::sqrt(6.0 / double(s.kernel_size + s.heads * s.kernel_size));
  weight = register_parameter("weight", initial_uniform({s.heads, s.kernel_size}, bound));
}

at::Tensor LightConv::operator()(const at::Tensor&) { return normalise(weight); }

DynamicConv::DynamicConv(const ConvKernelSpec& s) : ConvKernel(s) {
  const int64_t out = s.heads * s.kernel_size;
  const double bound = std::sqrt(6.0 / double(s.dim + out));
  weight = register_parameter("weight", initial_uniform({out, s.dim}, bound));
}

at::Tensor DynamicConv::operator()(const at::Tensor& x) {
  auto w = at::linear(x, weight);  // [B, T, H·K]
  return normalise(w.view({x.size(0), x.size(1), spec_.heads, spec_.kernel_size}));
}

std::shared_ptr<ConvKernel> make_conv_kernel(const ConvKernelSpec& s) {
  if (s.dynamic) return std::make_shared<DynamicConv>(s);
  return std::make_shared<LightConv>(s);
}

}  // namespace yoke
