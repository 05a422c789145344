// log-softmax over each row of a search's scores, as at::log_softmax(x, -1) computes it up to
// float rounding. LibTorch 1.13's CPU kernel takes the maximum of a block of rows, then their sums
// of exponentials, then writes them: three passes over a [beam × sentences, V] matrix of several
// MB, from memory each time, into a new tensor (7–12% of int8 beam search in LibTorch's profiler on
// the AMD EPYC). Here each row is done while it is in cache (maximum, Σ exp, write) and in place.
//
// The exponentials are a polynomial of our own (Cephes' expf: range reduction by ln 2, degree 5,
// about 1 ulp), 16 floats at a time, summed in one fixed order: lane i over blocks of 16, then the
// lanes folded in halves. No fused multiply-add, so every x86-64 processor (AVX-512, AVX2 or the
// SSE2 baseline, picked when the program loads) gets the same bits. SLEEF, LibTorch's own, is not
// exported by PyTorch's wheel on the GPU machine and has no Debian 12 development package.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace yoke {

// log_softmax over the last dimension of x. fp32 on the CPU, contiguous: computed in x itself,
// which is returned (x must be a tensor the caller owns, such as a fresh product's output). Any
// other tensor: at::log_softmax(x, -1), a new tensor.
at::Tensor log_softmax_in_place(at::Tensor x);

// One row of n ≥ 1 floats, in place. `next` (null: none), the row that follows, is prefetched
// while this one's exponentials are summed.
void log_softmax_row(float* x, int64_t n, const float* next = nullptr);

// e^x for the row's arithmetic, one float: the same bits as the vector loop gives x (tests).
float row_exp(float x);

}  // namespace yoke
