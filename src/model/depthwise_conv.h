// The depthwise convolution over time of Wu et al. 2019 ("Pay Less Attention with Lightweight and
// Dynamic Convolutions"), for both of their kernels: x [B, T, C] with C = H·R channels in H heads
// (channel c belongs to head c / R), and a kernel of K taps per head that is either one for the
// whole sequence ([H, K]: LightConv) or one per position ([B, T, H, K]: DynamicConv):
//
//   out[b, t, c] = Σ_k kernel[h(c), k] · x[b, t − padding + k, c],   x = 0 outside [0, T)
//
// padding = K / 2 centres the kernel (encoder), K − 1 makes it causal (decoder); taps that fall
// outside the sequence are cut. Two exact ways to compute it, chosen by length:
//   band:   the kernel rows as a T×T band matrix (skewed by a pad-and-reshape, no copy loop), then
//           one batched matrix product; O(T²·C) multiply-adds, but in a GEMM, and the fastest for
//           the short sentences of translation (T up to a few K).
//   unfold: a strided view of the K taps of every position, then a product over K; O(T·K·C),
//           for long sequences where T² would dominate (a broadcast multiply over the view
//           and a sum over K; it reads K copies of the input).
#pragma once
#include "compat/torch.h"

namespace yoke {

enum class ConvMethod { automatic, band, unfold };

// Whether the band method is the faster for this length and kernel size (per_position: a
// DynamicConv kernel). On a CPU the band's time grows with T and unfold's with K (it is memory-
// bound, K copies of the input): `yoke_bench_speed --part conv` measured the crossover at
// T ≈ 130·K (LightConv, one band for the batch) and T ≈ 50·K (DynamicConv) on 2 cores, d 256;
// translation batches (T < 100) always take the band.
bool band_is_faster(int64_t length, int64_t kernel_size, bool per_position);

at::Tensor depthwise_conv(const at::Tensor& x, const at::Tensor& kernel, int64_t padding,
                          ConvMethod method = ConvMethod::automatic);

// The causal convolution's output at the last of K positions only (incremental decoding):
// window [N, K, C] holds the last K inputs (zeros before the start), kernel is [H, K] or
// [N, 1, H, K]. Returns [N, 1, C].
at::Tensor depthwise_conv_last(const at::Tensor& window, const at::Tensor& kernel);

}  // namespace yoke
