// Layer normalization at inference on the CPU: y = (x − mean) · rstd · γ + β over each row of the
// last dimension, rstd = 1 / √(var + ε), mean and var (biased) over the row in two passes.
//
// LibTorch 1.13's kernel costs about 34 µs a call on a decoding step's [128, 256] rows (4.8% of int8
// beam search, LibTorch's profiler, AMD EPYC), most of it dispatch and temporaries for mean and rstd;
// and it sums in an order that depends on the instruction set it dispatches to (AVX2 or AVX-512),
// so two processors could decode differently. Here each row is summed in one fixed order (lane i
// over blocks of 16, the lanes folded in halves, a row's tail in its own block of zeros) without
// fused multiply-add, in AVX-512, AVX2 and baseline clones that give the same bits.
#pragma once
#include <ATen/ATen.h>

namespace yoke {

// Whether row_layer_norm takes x, weight and bias: fp32 on the CPU, no gradient wanted
// (GradMode off: decoding, validation, scoring), weight and bias [n] where n = x's last size.
bool row_layer_norm_fits(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// A new tensor shaped as x.
at::Tensor row_layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, float eps);

// One row of n floats into y (which may be x).
void layer_norm_row(const float* x, const float* weight, const float* bias, float eps, int64_t n, float* y);

}  // namespace yoke
