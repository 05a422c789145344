// A fp32 linear map for decoding on the CPU on oneDNN's matmul primitive, its weights packed once:
//   y = x·Wᵀ + b   (then relu where asked)
// OpenBLAS, under at::linear, copies ("packs") the weight matrix into its own blocked layout at
// every call (sgemm_incopy took 15–18% of fp32 decoding; docs/performance.md, "Where decoding
// goes"); a decoding step multiplies a few rows by every weight, so that copy is most of the
// work it saves. Here a primitive is made once per row count, a call's rows cut into pieces of
// at most 128 rows without padding (model/product_rows.h), and the weights are packed once into
// the layout the primitives ask for.
// yoke_bench_fp32_linear measures it against at::linear at a decoding step's shapes.
// The sums run in another order than OpenBLAS's: results agree to float rounding, not bit for bit.
// Built only where LibTorch loads the same libdnnl (as model/int8_matmul.h).
#pragma once
#include <memory>

#include "compat/torch.h"
#include "model/decoding_linear.h"

namespace yoke {

// Whether this build has oneDNN's fp32 product.
bool fp32_matmul_available();

class Fp32Matmul : public DecodingLinear {
 public:
  // weight: fp32 [N, K], kept by reference and packed on first use (it must not change after);
  // bias fp32 [N] or undefined. Throws where unavailable.
  Fp32Matmul(const at::Tensor& weight, const at::Tensor& bias);
  ~Fp32Matmul();
  // x fp32 [..., K] → fp32 [..., N]. Safe to call from several threads at once. One to three
  // rows of a small matrix go to at::linear (OpenBLAS's matrix-vector kernels beat a padded
  // primitive there: yoke_bench_fp32_linear).
  at::Tensor operator()(const at::Tensor& x, bool relu = false) const override;
  int64_t out_features() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace yoke
