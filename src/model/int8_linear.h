// An int8 linear map for decoding on the CPU: y = x·Wᵀ + b with W stored as int8, one scale per
// output row (symmetric, zero point 0), and x quantized on the fly at each call to uint8 with
// one scale and zero point for the whole call (dynamic quantization), the products accumulated
// in int32 and the result in fp32, on LibTorch's quantized engine (compat::use_int8_engine).
// Where the processor multiplies bf16 natively (AVX512-BF16, AMX) the int8 weights are instead
// dequantized once to bf16 and multiplied there: on such a machine the engine's dynamic int8
// linear, with its quantize/dequantize around every call, made beam search slower than fp32,
// and the bf16 products faster (docs/performance.md, "int8 decoding on the CPU").
#pragma once
#include <map>
#include <memory>
#include <string>

#include "compat/torch.h"

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

// True when this LibTorch has a quantized engine for the CPU (and makes it the current one).
bool int8_available();

class Int8Linear;
// The Int8Linear of weights[name] with `bias`; an InputError when the weights lack the name.
std::shared_ptr<const Int8Linear> int8_linear(const Int8Weights& weights, const std::string& name,
                                              const at::Tensor& bias);

class Int8Linear {
 public:
  // bias: fp32 [N] or undefined. Throws when this LibTorch has no quantized engine.
  Int8Linear(const Int8Weight& weight, const at::Tensor& bias);
  // x [..., K] fp32 on the CPU → [..., N] fp32; relu: max(0, y).
  at::Tensor operator()(const at::Tensor& x, bool relu = false) const;
  int64_t out_features() const { return out_; }

 private:
  struct Packed;
  std::shared_ptr<Packed> packed_;
  int64_t out_ = 0;
};

}  // namespace yoke
