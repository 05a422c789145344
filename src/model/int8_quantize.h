// The element-wise steps of yoke's int8 product (model/int8_matmul.h) around oneDNN's integer
// sums, on plain float arrays: the activations' range, their quantization to uint8, and each
// output column's scale and added term. Each has an SSE2 version (every x86-64 processor) and,
// where it pays, an AVX-512 one chosen at run time; both give the same bits, which needs no
// multiply and add fused (CMakeLists.txt: -ffp-contract=off). No LibTorch here: it compiles in a
// second without the precompiled header.
#pragma once
#include <cstdint>
#include <utility>

namespace yoke::int8 {

// The smallest and largest of x[0..n) (INFINITY and -INFINITY when n = 0).
std::pair<float, float> range_of(const float* x, int64_t n);

// q[i] = clamp(round(x[i]·inv_scale + zero), 0, qmax), the product and the sum each rounded to
// fp32 and the result rounded half to even.
void quantize(const float* x, uint8_t* q, int64_t n, float inv_scale, float zero, float qmax);

// Per output column j: cs[j] = scale·ws[j] and ca[j] = b[j] − cs[j]·zero·sums[j], in that order.
void column_terms(const float* ws, const float* sums, const float* b, float scale, float zero, float* cs, float* ca,
                  int64_t n);

}  // namespace yoke::int8
