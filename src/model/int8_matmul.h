// yoke's own int8 product for decoding on the CPU, on oneDNN's matmul primitive (Debian's
// libdnnl-dev, the oneDNN that Debian's LibTorch itself loads):
//   y = s_x·s_w[n]·(Σ_k q_k·w[n,k] − z·Σ_k w[n,k]) + b[n]      (then relu where asked)
// with x quantized once per call to uint8 q = round(x/s_x) + z over the call's range, w int8 with
// one scale per output row packed once into oneDNN's own layout, u8×s8 products summed in int32,
// and the scales, the zero point's correction and the bias applied by the primitive as it writes
// its fp32 output (output scales and one per-column add). LibTorch's dynamic int8 linear does the
// same in four operators (range, quantize, product, dequantize) and recompiled oneDNN kernels as it
// went (docs/performance.md); here the primitives are made once per row bucket and kept.
// Processors without VNNI multiply u8·s8 pairs into int16 sums that can saturate: there the
// activations keep 7 bits (0–127), as FBGEMM's reduce_range does.
// Built only where LibTorch loads the same libdnnl (CMakeLists.txt: PyTorch's wheel carries its
// own oneDNN under the same symbol names); elsewhere int8_matmul_available() is false.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "compat/torch.h"

namespace yoke {

struct Int8Weight;  // model/int8_linear.h

// Whether this build has the oneDNN int8 product.
bool int8_matmul_available();
// Whether the processor sums u8·s8 products without saturating (VNNI), so activations keep 8 bits;
// and the instruction set oneDNN runs ("avx512_core_vnni", …), for logs.
bool int8_matmul_has_vnni();
std::string int8_matmul_isa();

class Int8Matmul {
 public:
  // weight: int8 [N, K] with N scales; bias fp32 [N] or undefined. Throws where unavailable.
  Int8Matmul(const Int8Weight& weight, const at::Tensor& bias);
  ~Int8Matmul();
  // x fp32 [M, K], contiguous → fp32 [M, N]. Safe to call from several threads at once.
  at::Tensor operator()(const at::Tensor& x, bool relu) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace yoke
