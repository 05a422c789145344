// The one place where LibTorch versions differ (Debian's 1.13 on CPU machines, PyTorch 2.x's
// LibTorch on the GPU machine). Every yoke file that needs tensors includes this header and only
// the module header below, never <torch/torch.h>, which costs ~3x the compile time.
#pragma once
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/module.h>
#include <torch/version.h>

#include <string>

#include "util/error.h"
#include "util/thread_policy.h"
#if TORCH_VERSION_MAJOR >= 2
#include <ATen/autocast_mode.h>
#endif

// at::parallel_for is inline: without OpenMP in this file's compilation it runs serially (see
// CMakeLists.txt, OpenMP::OpenMP_CXX), and yoke's kernels would ignore --threads without a word.
#if AT_PARALLEL_OPENMP && !defined(_OPENMP)
#error "LibTorch runs its threads on OpenMP: compile yoke with OpenMP (-fopenmp), or at::parallel_for is serial"
#endif

namespace yoke::compat {

constexpr bool kTorch2 = TORCH_VERSION_MAJOR >= 2;

// Attention softmax(q kᵀ/√d + mask) v. LibTorch 2.x has a fused kernel; 1.13 gets the plain form.
// mask: additive float mask broadcastable to [B, H, Tq, Tk] or undefined.
inline at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& mask, double dropout_p, bool training) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, mask.defined() ? c10::optional<at::Tensor>(mask) : c10::nullopt,
                                          training ? dropout_p : 0.0, false);
#else
  if (q.size(-2) == 1 && !(training && dropout_p > 0)) {
    // One query per head (a decoding step): 1.13's CPU bmm runs a matrix product per batch × head
    // for these shapes (a select and a GEMM call each: 512 calls a step at beam 4 × 32 sentences ×
    // 4 heads, half of beam search's time); products summed over the head dimension do it in one
    // element-wise kernel each way.
    auto scores = (q * k).sum(-1).unsqueeze(-2).mul_(1.0 / std::sqrt(double(q.size(-1))));  // [B, H, 1, Tk]
    if (mask.defined()) scores.add_(mask);
    return (at::softmax(scores, -1).transpose(-2, -1) * v).sum(-2, true);  // [B, H, 1, dh]
  }
  auto scores = at::matmul(q, k.transpose(-2, -1)).mul_(1.0 / std::sqrt(double(q.size(-1))));
  if (mask.defined()) scores.add_(mask);
  auto probs = at::softmax(scores, -1);
  if (training && dropout_p > 0) probs = at::dropout(probs, dropout_p, true);
  return at::matmul(probs, v);
#endif
}

// What `--threads N` and `threads = N` mean: N threads in LibTorch's pool and in OpenBLAS's. The
// pools are separate (OpenBLAS runs its own pthreads), so at::set_num_threads alone left the
// matrix products on OpenBLAS's default of one thread per core: `translate --threads 1` ran its
// fp32 products on both cores of the dev machine (1.4x one thread's speed at beam 4), and two
// `threads = 1` trainings beside each other ran four threads on two cores.
inline void set_compute_threads(int threads) {
  at::set_num_threads(threads);
  set_blas_threads(threads);
}

// One thread in both pools for its lifetime, then the sizes it found: what a decoding worker
// runs on, for timing kernels as it will use them (model/int8_kernel.h, fp32_kernel.h).
class OneComputeThread {
 public:
  OneComputeThread() : threads_(at::get_num_threads()), blas_(1) { at::set_num_threads(1); }
  ~OneComputeThread() { at::set_num_threads(threads_); }
  OneComputeThread(const OneComputeThread&) = delete;
  OneComputeThread& operator=(const OneComputeThread&) = delete;

 private:
  int threads_;
  BlasThreadsOverride blas_;
};

// Devices named in the config or on the command line: "cpu", "cuda", "auto" (cuda when this
// LibTorch has CUDA and a GPU is visible). Asking for cuda without one is an error that says so.
inline at::Device device_from_name(const std::string& name) {
  if (name == "cuda" && !at::hasCUDA())
    throw InputError(
        "device = cuda, but this yoke's LibTorch has no CUDA or no GPU is visible; use device = cpu or auto "
        "(a CUDA build: scripts/gpu-build.sh)");
  if (name == "cuda" || (name == "auto" && at::hasCUDA())) return at::Device(at::kCUDA);
  if (name != "cpu" && name != "auto") throw InputError("device '" + name + "': use cpu, cuda or auto");
  return at::Device(at::kCPU);
}

// TF32 for the fp32 matrix products that remain on a GPU (no effect on a CPU).
inline void allow_tf32() { at::globalContext().setFloat32MatmulPrecision("high"); }

// bf16 autocast on a GPU for the scope of the guard: weights stay fp32 (the master copy the
// optimizer updates), matrix products run in bf16, reductions and norms in fp32. On a CPU, or
// with LibTorch 1.13 (CPU only here), it does nothing.
class Autocast {
 public:
  Autocast(const at::Device& device, bool enabled) : on_(enabled && device.is_cuda()) {
#if TORCH_VERSION_MAJOR >= 2
    if (!on_) return;
    was_ = at::autocast::is_autocast_enabled(at::kCUDA);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::increment_nesting();
#endif
  }
  ~Autocast() {
#if TORCH_VERSION_MAJOR >= 2
    if (!on_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(at::kCUDA, was_);
#endif
  }
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

 private:
  bool on_ = false, was_ = false;
};

// The dtype matrix products on x's device run in right now: bf16 under a GPU autocast, else x's own.
inline at::ScalarType matmul_dtype(const at::Tensor& x) {
#if TORCH_VERSION_MAJOR >= 2
  if (x.is_cuda() && at::autocast::is_autocast_enabled(at::kCUDA)) return at::autocast::get_autocast_dtype(at::kCUDA);
#endif
  return x.scalar_type();
}

}  // namespace yoke::compat
