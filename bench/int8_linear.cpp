// One linear map at the shapes of a decoding step (rows = beam × sentences still going; the
// reference model's d 256, FFN 1024, V 8000): fp32 at::linear (OpenBLAS) against LibTorch's
// dynamic int8 linear on each quantized engine this build has, and against yoke's own int8 and
// bf16 kernels (model/int8_linear.h). Microseconds per call, median of 5 runs of 200 calls after
// 20 warm-up calls; err = max |int8 − fp32| / max |fp32|. It repeats one matrix and one input:
// LibTorch's oneDNN engine looks faster here than it decodes (docs/performance.md, "int8
// decoding"), which is why `yoke` chooses its kernel by timing the model's own matrices.
//   yoke_bench_int8_linear [--threads T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compat/quantized.h"
#include "model/int8_kernel.h"
#include "model/int8_linear.h"
#include "util/thread_policy.h"

namespace {

template <class F>
double microseconds(F f) {
  for (int i = 0; i < 20; ++i) f();
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) f();
    runs.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 200);
  }
  std::sort(runs.begin(), runs.end());
  return runs[2];
}

}  // namespace

int main(int argc, char** argv) {
  yoke::use_fast_math_library_settings(argv);
  int threads = 1;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--threads") threads = std::atoi(argv[i + 1]);
  yoke::compat::set_compute_threads(threads);  // LibTorch's threads and OpenBLAS's
  at::NoGradGuard no_grad;
  std::vector<at::QEngine> engines;
  for (auto e : at::globalContext().supportedQEngines())
    if (e != at::QEngine::NoQEngine) engines.push_back(e);
  std::printf("threads %d, OpenBLAS kernels %s\n| out × in | rows | fp32 µs |", threads, yoke::blas_kernel_name());
  for (auto e : engines) std::printf(" %s µs | speed-up | err |", std::string(c10::toString(e)).c_str());
  const yoke::Int8Kernel kernels[] = {yoke::Int8Kernel::int8, yoke::Int8Kernel::bf16};
  for (auto kern : kernels) std::printf(" yoke %s µs | speed-up | err |", yoke::name_of(kern).c_str());
  std::printf("\n");
  const int64_t shapes[][2] = {{768, 256}, {256, 256}, {1024, 256}, {256, 1024}, {8000, 256}};
  for (const auto& s : shapes) {
    for (int64_t rows : {20, 80, 160}) {
      at::manual_seed(1);
      const int64_t n = s[0], k = s[1];
      auto w = at::randn({n, k}) * 0.05, b = at::randn({n}) * 0.1, x = at::randn({rows, k});
      const auto ref = at::linear(x, w, b);
      const double t32 = microseconds([&] { at::linear(x, w, b); });
      std::printf("| %ld × %ld | %ld | %.1f |", long(n), long(k), long(rows), t32);
      auto scales = (w.abs().amax(1).clamp_min(1e-12) / 127.0).to(at::kDouble);
      for (auto e : engines) {
        at::globalContext().setQEngine(e);
        auto q = at::quantize_per_channel(w, scales, at::zeros({n}, at::kLong), 0, at::kQInt8);
        if (e == at::QEngine::QNNPACK)  // QNNPACK's linear takes per-tensor weights
          q = at::quantize_per_tensor(w, w.abs().max().item<double>() / 127, 0, at::kQInt8);
        auto packed = yoke::compat::int8_prepack(q, b);
        const bool reduce = yoke::compat::int8_reduce_range();
        const double err = (packed->apply_dynamic(x, reduce) - ref).abs().max().item<double>() / ref.abs().max().item<double>();
        const double t8 = microseconds([&] { packed->apply_dynamic(x, reduce); });
        std::printf(" %.1f | %.2f | %.3f |", t8, t32 / t8, err);
      }
      const auto w8 = yoke::Int8Weight::quantize(w);
      for (auto kern : kernels) {
        if (!yoke::int8_kernel_available(kern)) {
          std::printf(" - | - | - |");
          continue;
        }
        const yoke::Int8Linear lin(w8, b, kern);
        const double err = (lin(x) - ref).abs().max().item<double>() / ref.abs().max().item<double>();
        const double t8 = microseconds([&] { lin(x); });
        std::printf(" %.1f | %.2f | %.3f |", t8, t32 / t8, err);
      }
      std::printf("\n");
    }
  }
  return 0;
}
