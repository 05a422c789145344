// An int8 linear map for decoding on the CPU: y = x·Wᵀ + b with W stored as int8, one scale per
// output row (symmetric, zero point 0). Three kernels multiply it (model/int8_kernel.h says which
// runs, chosen by measuring):
//   int8  x quantized on the fly at each call to uint8 with one scale and zero point for the whole
//         call (dynamic quantization), products accumulated in int32, the result in fp32: on
//         yoke's oneDNN matmul (model/int8_matmul.h) where built, else on LibTorch's quantized
//         engine (compat::use_int8_engine);
//   bf16  the weights dequantized once to bf16 and multiplied there by oneDNN: where the processor
//         multiplies bf16 natively (AVX512-BF16 with AMX) this beat both others;
//   fp32  the dequantized weights in fp32 (for the measurement; a model whose kernel is fp32 runs
//         its own fp32 layers instead).
#pragma once
#include <map>
#include <memory>
#include <string>

#include "compat/torch.h"
#include "model/decoding_linear.h"
#include "model/int8_kernel.h"

namespace yoke {

// w ≈ values · scales[row]: values int8 [N, K] in [−127, 127], scales fp32 [N].
struct Int8Weight {
  at::Tensor values, scales;
  static Int8Weight quantize(const at::Tensor& w);  // round(w / (max|w_row| / 127))
  at::Tensor dequantized() const;                   // fp32 [N, K]
};

// Names (a model's parameter names, or "output" for the effective output matrix) → weights.
using Int8Weights = std::map<std::string, Int8Weight>;

// The row count the bf16 kernel pads `rows` to (≥ rows; few distinct values, see Int8Linear).
int64_t row_bucket(int64_t rows);

class Int8Linear;
// The Int8Linear of weights[name] with `bias`, on this process's kernel (int8_kernel()); an
// InputError when the weights lack the name.
std::shared_ptr<const Int8Linear> int8_linear(const Int8Weights& weights, const std::string& name,
                                              const at::Tensor& bias);

class Int8Linear : public DecodingLinear {
 public:
  // bias: fp32 [N] or undefined. Throws when this LibTorch lacks the kernel.
  Int8Linear(const Int8Weight& weight, const at::Tensor& bias, Int8Kernel kernel);
  // x [..., K] fp32 on the CPU → [..., N] fp32; relu: max(0, y).
  at::Tensor operator()(const at::Tensor& x, bool relu = false) const override;
  int64_t out_features() const { return out_; }

 private:
  struct Packed;
  std::shared_ptr<Packed> packed_;
  int64_t out_ = 0;
};

}  // namespace yoke
