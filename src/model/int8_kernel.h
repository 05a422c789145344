// Which kernel multiplies an int8 model's weights on this CPU, chosen by measuring them here: the
// processor's flags chose wrongly, bf16 on a Xeon with AVX512-BF16 but no AMX, where int8 decoding
// then ran at 0.69× of fp32's speed (docs/performance.md, "int8 decoding on the CPU").
//   bf16  the weights dequantized once to bf16, products by oneDNN through at::linear
//   int8  u8×s8 products summed in int32: yoke's own on oneDNN's matmul (model/int8_matmul.h) where
//         the build has it, else LibTorch's quantized engine (its dynamic int8 linear)
//   fp32  the dequantized weights in fp32 (the model's own fp32 path), when neither beats it
// YOKE_INT8_KERNEL = bf16 | int8 | fp32 pins the choice for a process (benchmarks, tests).
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace yoke {

enum class Int8Kernel { bf16, int8, fp32 };
struct Int8Weight;  // model/int8_linear.h

std::string name_of(Int8Kernel k);

// True when this LibTorch has a quantized kernel for the CPU, bf16 or int8 (and makes the int8
// engine the current one where it has it).
bool int8_available();
// Whether this build and processor run kernel k: bf16 where oneDNN multiplies bf16 here, int8 where
// the build has oneDNN's product (model/int8_matmul.h) or LibTorch a quantized engine, fp32 always.
bool int8_kernel_available(Int8Kernel k);
// Which product the int8 kernel runs here, for logs: "oneDNN u8×s8 on avx512_core_vnni", with
// ", 7-bit activations: no VNNI" where it keeps 7 bits, or "LibTorch's quantized engine".
std::string int8_route();
// Whether the int8 kernel quantizes activations to 7 bits here (no VNNI for yoke's product, or the
// engine's compat::int8_reduce_range), so that its rounding is twice the 8-bit one.
bool int8_activations_keep_7_bits();
std::optional<Int8Kernel> int8_kernel_from_name(const std::string& name);

// Seconds each kernel took for the same products; NaN for a kernel this LibTorch lacks.
struct Int8KernelTimes {
  double fp32 = NAN, bf16 = NAN, int8 = NAN;
};

// A quantized kernel must take at most this share of fp32's time to be chosen: the best of three
// short timings still moves by a few percent from one process to the next, and a gain smaller
// than that is not worth the quantized kernel's rounding.
constexpr double kInt8MaxTimeShare = 0.9;

// Pure: the faster of bf16 and int8 where it takes at most kInt8MaxTimeShare of fp32's time,
// else fp32 (never slower than fp32, up to the timings' noise).
Int8Kernel pick_int8_kernel(const Int8KernelTimes& t);

// Times each available kernel on the calling thread's settings over `weights` (a model's int8
// matrices): each matrix at 4, 16, 48, 128 and 256 rows (calls over 1.6·10⁷ multiply-adds left
// out), new activations at every call: one round to warm up, then three rounds with the kernels
// taking turns, each kernel's best round counting. A round that takes more than twice what could
// still be chosen is stopped early, its time extrapolated.
Int8KernelTimes measure_int8_kernels(const std::vector<const Int8Weight*>& weights);

// The kernel of this process: pinned (pin_int8_kernel, or YOKE_INT8_KERNEL), else chosen by
// choose_int8_kernel. A logic_error before either.
Int8Kernel int8_kernel();
void pin_int8_kernel(Int8Kernel k);
// The first int8 model a process loads chooses: the pinned kernel, else the one measured
// fastest on its weights on one thread (pick_int8_kernel), kept for the process.
Int8Kernel choose_int8_kernel(const std::vector<const Int8Weight*>& weights);

// How the kernel was chosen, for logs: "bf16 (measured: bf16 0.61, int8 0.83 of fp32's time)",
// "int8 (pinned)"; "" before int8_kernel() was first asked.
std::string int8_kernel_reason();

}  // namespace yoke
