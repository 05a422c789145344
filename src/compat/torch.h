// The one place where LibTorch versions differ (Debian's 1.13 on CPU machines, PyTorch 2.x's
// LibTorch on the GPU machine). Every yoke file that needs tensors includes this header and only
// the module header below, never <torch/torch.h>, which costs ~3x the compile time.
#pragma once
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/module.h>
#include <torch/version.h>

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
  auto scores = at::matmul(q, k.transpose(-2, -1)).mul_(1.0 / std::sqrt(double(q.size(-1))));
  if (mask.defined()) scores.add_(mask);
  auto probs = at::softmax(scores, -1);
  if (training && dropout_p > 0) probs = at::dropout(probs, dropout_p, true);
  return at::matmul(probs, v);
#endif
}

// Devices named in the config: "cpu", "cuda", "auto" (cuda when available).
inline at::Device device_from_name(const std::string& name) {
  if (name == "cuda" || (name == "auto" && at::hasCUDA())) return at::Device(at::kCUDA);
  return at::Device(at::kCPU);
}

}  // namespace yoke::compat
