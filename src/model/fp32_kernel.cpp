#include "model/fp32_kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "model/fp32_matmul.h"
#include "model/kernel_timing.h"
#include "util/error.h"

namespace yoke {

namespace {

std::mutex kernel_mutex;
std::optional<Fp32Kernel> chosen;
std::string reason;

}  // namespace

std::string name_of(Fp32Kernel k) { return k == Fp32Kernel::onednn ? "onednn" : "openblas"; }

std::optional<Fp32Kernel> fp32_kernel_from_name(const std::string& name) {
  for (auto k : {Fp32Kernel::openblas, Fp32Kernel::onednn})
    if (name_of(k) == name) return k;
  return std::nullopt;
}

bool fp32_kernel_available(Fp32Kernel k) { return k == Fp32Kernel::openblas || fp32_matmul_available(); }

Fp32Kernel pick_fp32_kernel(const Fp32KernelTimes& t) {
  if (!std::isfinite(t.onednn)) return Fp32Kernel::openblas;
  if (!std::isfinite(t.openblas)) return Fp32Kernel::onednn;
  return t.onednn <= kFp32MaxTimeShare * t.openblas ? Fp32Kernel::onednn : Fp32Kernel::openblas;
}

Fp32KernelTimes measure_fp32_kernels(const std::vector<at::Tensor>& weights) {
  at::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(12345);  // leaves the global generator alone
  std::vector<std::pair<int64_t, int64_t>> shapes;
  int64_t widest = 0;
  for (const auto& w : weights) {
    shapes.emplace_back(w.size(0), w.size(1));
    widest = std::max(widest, w.size(1));
  }
  const auto calls = timed_calls(shapes, {4, 16, 48, 128});
  constexpr int kTimedRounds = 3;
  std::vector<at::Tensor> inputs;  // per round: every call starts at its own row
  for (int r = 0; r <= kTimedRounds; ++r) inputs.push_back(at::randn({128 + int64_t(calls.size()), widest}, gen));
  std::vector<at::Tensor> plain;
  std::vector<std::unique_ptr<Fp32Matmul>> packed;
  for (const auto& w : weights) {
    plain.push_back(w.detach().to(at::kFloat).contiguous());
    if (fp32_matmul_available()) packed.push_back(std::make_unique<Fp32Matmul>(plain.back(), at::Tensor()));
  }
  auto time_round = [&](Fp32Kernel k, int round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t c = 0; c < calls.size(); ++c) {
      const auto& w = plain[calls[c].matrix];
      const auto x = inputs[size_t(round)].narrow(0, int64_t(c), calls[c].rows).narrow(1, 0, w.size(1)).contiguous();
      if (k == Fp32Kernel::onednn) (*packed[calls[c].matrix])(x);
      else at::linear(x, w);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Fp32KernelTimes t;
  t.openblas = INFINITY;
  if (!packed.empty()) t.onednn = INFINITY;
  for (int round = 0; round <= kTimedRounds; ++round) {
    const double a = time_round(Fp32Kernel::openblas, round);
    const double b = packed.empty() ? NAN : time_round(Fp32Kernel::onednn, round);
    if (round == 0) continue;  // warm-up: packs the weights, makes the primitives
    t.openblas = std::min(t.openblas, a);
    if (!packed.empty()) t.onednn = std::min(t.onednn, b);
  }
  return t;
}

Fp32Kernel choose_fp32_kernel(const std::vector<at::Tensor>& weights) {
  std::lock_guard<std::mutex> lock(kernel_mutex);
  if (chosen) return *chosen;
  if (const char* v = std::getenv("YOKE_FP32_KERNEL"); v && *v) {
    const auto k = fp32_kernel_from_name(v);
    if (!k) throw InputError(std::string("YOKE_FP32_KERNEL=") + v + ": openblas or onednn expected");
    if (!fp32_kernel_available(*k))
      throw InputError(std::string("YOKE_FP32_KERNEL=") + v + ": not available here (this build has no oneDNN product)");
    chosen = *k;
    reason = name_of(*k) + " (pinned by YOKE_FP32_KERNEL)";
    return *chosen;
  }
  if (!fp32_matmul_available()) {
    chosen = Fp32Kernel::openblas;
    reason = "openblas (this build has no oneDNN product)";
    return *chosen;
  }
  // On one thread, LibTorch's and OpenBLAS's, as decoding's workers run (model/int8_kernel.cpp).
  Fp32KernelTimes t;
  {
    compat::OneComputeThread one;
    t = measure_fp32_kernels(weights);
  }
  chosen = pick_fp32_kernel(t);
  char buf[96];
  std::snprintf(buf, sizeof buf, " (measured: onednn %.2f of openblas's time)", t.onednn / t.openblas);
  reason = name_of(*chosen) + buf;
  return *chosen;
}

std::string fp32_kernel_reason() {
  std::lock_guard<std::mutex> lock(kernel_mutex);
  return reason;
}

}  // namespace yoke
