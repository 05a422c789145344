// Batched matrix products A · B for training attention on the CPU (q kᵀ and probabilities · v,
// forward and backward), each one call of oneDNN's matmul over all batch × head matrices.
//
// LibTorch 1.13's CPU bmm runs these shapes (a few dozen rows, 64 columns, a thousand matrices a
// batch) as a loop of select() and a GEMM call per matrix: 3000 selects and as many OpenBLAS
// calls per product, 1.5–3.7 ms each where oneDNN takes 0.4–0.8 (2-core Intel Xeon, 300 sentences ×
// 4 heads × 14 positions). Only in builds with oneDNN beside LibTorch (YOKE_HAVE_ONEDNN).
#pragma once
#include <ATen/ATen.h>

namespace yoke {

// Whether batched_product takes a and b: a build with oneDNN, fp32 on the CPU, a [..., M, K] and
// b [..., K, N] with the same leading sizes (no broadcasting) and nothing empty.
bool batched_product_fits(const at::Tensor& a, const at::Tensor& b);

// a · b over the last two dimensions, [..., M, N]; differentiable in a and b. Reads a and b through
// their strides (a transpose or a head split is not copied). The result's dimensions lie in memory
// in the order of `layout`'s strides when given (a tensor of as many dimensions, e.g. the queries'
// head split, so that merging the heads back is a view), else row-major; each gradient lies as its
// input does.
at::Tensor batched_product(const at::Tensor& a, const at::Tensor& b, const at::Tensor& layout = {});

}  // namespace yoke
