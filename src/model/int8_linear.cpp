#include "model/int8_linear.h"

#include <algorithm>

#include "compat/quantized.h"
#include "model/int8_matmul.h"

namespace yoke {

Int8Weight Int8Weight::quantize(const at::Tensor& w) {
  at::NoGradGuard no_grad;
  auto w32 = w.detach().to(at::kCPU, at::kFloat).contiguous();
  // An all-zero row (padding) keeps a tiny positive scale: its values are all 0 either way.
  auto scales = w32.abs().amax(1).clamp_min(1e-12) / 127.0;
  auto values = (w32 / scales.unsqueeze(1)).round_().clamp_(-127, 127).to(at::kChar);
  return {values, scales};
}

at::Tensor Int8Weight::dequantized() const { return values.to(at::kFloat) * scales.unsqueeze(1); }

int64_t row_bucket(int64_t rows) {
  if (rows <= 8) return 8;
  // Multiples of 8 up to 64 rows (small products are bound by reading the weights, so padded rows
  // cost little), then four buckets per doubling: under 25% padding.
  int64_t step = 1;
  while (step * 8 < rows) step *= 2;
  step = std::max<int64_t>(step, 8);
  return (rows + step - 1) / step * step;
}

struct Int8Linear::Packed {
  compat::Int8Packed params;        // the quantized engine's packed weight and bias
  at::Tensor values16, bias;          // bf16 kernel: the dequantized weights in bf16, the fp32 bias
  at::Tensor values32;                // fp32 kernel: the dequantized weights (with `bias`)
  std::shared_ptr<const Int8Matmul> matmul;  // int8 kernel where this build has oneDNN's product
};

Int8Linear::Int8Linear(const Int8Weight& w, const at::Tensor& bias, Int8Kernel kernel) : out_(w.values.size(0)) {
  TORCH_CHECK(w.values.dim() == 2 && w.values.scalar_type() == at::kChar && w.scales.numel() == out_,
              "Int8Linear: int8 [N, K] values with N scales expected");
  packed_ = std::make_shared<Packed>();
  if (kernel == Int8Kernel::fp32) {
    packed_->values32 = w.dequantized().contiguous();
    if (bias.defined()) packed_->bias = bias.detach().to(at::kCPU, at::kFloat).contiguous();
    return;
  }
  if (kernel == Int8Kernel::bf16) {
    if (!at::hasMKLDNN()) throw InputError("this LibTorch has no oneDNN for bf16 products");
    // The dequantized int8 weights, rounded to bf16 (8 significant bits: a relative error of at
    // most 2⁻⁹, below the int8 step of 1/254 of the row's largest weight for all but the smallest
    // weights), so that no pass over the output applies the row scales; the bias is added in fp32
    // (distance's −½‖w‖² is large and must not lose bits).
    packed_->values16 = w.dequantized().to(at::kBFloat16).contiguous();
    if (bias.defined()) packed_->bias = bias.detach().to(at::kCPU, at::kFloat).contiguous();
    return;
  }
  if (int8_matmul_available()) {
    packed_->matmul = std::make_shared<const Int8Matmul>(w, bias);
    return;
  }
  if (!compat::use_int8_engine()) throw InputError("this LibTorch has no quantized engine for int8 decoding");
  auto q = at::_make_per_channel_quantized_tensor(w.values.contiguous(), w.scales.to(at::kDouble),
                                                  at::zeros({out_}, at::kLong), 0);
  packed_->params = compat::int8_prepack(q, bias.defined() ? bias.detach().to(at::kCPU, at::kFloat).contiguous() : bias);
}

std::shared_ptr<const Int8Linear> int8_linear(const Int8Weights& weights, const std::string& name,
                                              const at::Tensor& bias) {
  auto it = weights.find(name);
  if (it == weights.end()) throw InputError("the int8 weights lack '" + name + "' (a different model config?)");
  return std::make_shared<const Int8Linear>(it->second, bias, int8_kernel());
}

at::Tensor Int8Linear::operator()(const at::Tensor& x, bool relu) const {
  TORCH_CHECK(x.device().is_cpu(), "Int8Linear runs on the CPU only");
  auto sizes = x.sizes().vec();
  auto x2 = x.reshape({-1, sizes.back()}).to(at::kFloat).contiguous();
  at::Tensor y;
  if (packed_->values32.defined()) {
    y = at::linear(x2, packed_->values32, packed_->bias);
  } else if (packed_->values16.defined()) {
    // bf16 kernel: activations rounded to bf16 (8 significant bits each), products accumulated in
    // fp32 by oneDNN, the result rounded to bf16 once. The rows are padded with zeros to a bucket
    // size: oneDNN compiles and caches a kernel per shape, and with every row count of a beam
    // search its cache (1024 kernels) grew a server by 350 MB over 10000 requests and kept
    // recompiling; with buckets a few hundred shapes cover every call.
    const int64_t rows = x2.size(0), padded = row_bucket(rows);
    auto x16 = at::empty({padded, x2.size(1)}, x2.options().dtype(at::kBFloat16));
    x16.narrow(0, 0, rows).copy_(x2);  // rounds to bf16 as it copies: one pass over x
    if (padded > rows) x16.narrow(0, rows, padded - rows).zero_();
    y = at::linear(x16, packed_->values16).narrow(0, 0, rows).to(at::kFloat);
    if (packed_->bias.defined()) y.add_(packed_->bias);
  } else if (packed_->matmul) {
    y = (*packed_->matmul)(x2, relu);
    relu = false;  // applied by the primitive
  } else {
    y = packed_->params->apply_dynamic(x2, compat::int8_reduce_range());
  }
  // Not apply_dynamic_relu: LibTorch 1.13's oneDNN version returns the product without the relu
  // (tests/torch/test_quantize.cpp caught it).
  if (relu) y.relu_();
  sizes.back() = out_;
  return y.view(sizes);
}

}  // namespace yoke
