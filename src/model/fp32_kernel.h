// Which product multiplies an fp32 model's weights when it decodes on the CPU, chosen by measuring
// the model's own matrices here, as model/int8_kernel.h chooses for int8 models:
//   openblas  at::linear on the parameters: OpenBLAS packs the weight matrix at every call
//   onednn    yoke's product on oneDNN, each weight packed once (model/fp32_matmul.h), where built
// YOKE_FP32_KERNEL = openblas | onednn pins the choice for a process (benchmarks, tests).
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compat/torch.h"

namespace yoke {

enum class Fp32Kernel { openblas, onednn };

std::string name_of(Fp32Kernel k);
std::optional<Fp32Kernel> fp32_kernel_from_name(const std::string& name);
bool fp32_kernel_available(Fp32Kernel k);  // onednn where the build has it; openblas always

// Seconds each kernel took for the same products; NaN for one this build lacks.
struct Fp32KernelTimes {
  double openblas = NAN, onednn = NAN;
};

// oneDNN must take at most this share of OpenBLAS's time to be chosen: a smaller gain is within
// what the best of three short timings moves from one process to the next.
constexpr double kFp32MaxTimeShare = 0.9;

// Pure: onednn where it was measured and took at most kFp32MaxTimeShare of openblas's time.
Fp32Kernel pick_fp32_kernel(const Fp32KernelTimes& t);

// Times both kernels on the calling thread's settings over `weights` (fp32 [N, K] matrices): each
// at 4, 16, 48 and 128 rows (calls over 1.6·10⁷ multiply-adds left out but the first), new
// activations at every call; one round to warm up (and pack), then three rounds with the kernels
// taking turns, each kernel's best round counting.
Fp32KernelTimes measure_fp32_kernels(const std::vector<at::Tensor>& weights);

// The kernel of this process: pinned (YOKE_FP32_KERNEL), else measured on the first model's
// weights on one thread (decoding runs one worker a core, each on one thread) and kept.
Fp32Kernel choose_fp32_kernel(const std::vector<at::Tensor>& weights);

// How the kernel was chosen, for logs: "onednn (measured: 0.62 of openblas's time)",
// "openblas (pinned by YOKE_FP32_KERNEL)"; "" before choose_fp32_kernel.
std::string fp32_kernel_reason();

}  // namespace yoke
