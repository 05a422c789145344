// One fp32 linear map at the shapes of a decoding step (rows = beam × sentences still going; the
// reference model's d 256, FFN 1024, V 8000): at::linear (OpenBLAS, which packs the weights at
// every call) against yoke's oneDNN product with weights packed once (model/fp32_matmul.h).
// Microseconds per call, the best of 5 rounds of 100 calls after 20 warm-up calls, the two
// taking turns within each round; each call gets a new input of the same shape (a step's
// activations are new), the matrix stays. err = max |oneDNN − at::linear| / max |at::linear|.
//   yoke_bench_fp32_linear [--threads T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/fp32_matmul.h"
#include "util/thread_policy.h"

int main(int argc, char** argv) {
  yoke::use_fast_math_library_settings(argv);
  int threads = 1;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--threads") threads = std::atoi(argv[i + 1]);
  yoke::compat::set_compute_threads(threads);  // LibTorch's threads and OpenBLAS's
  at::NoGradGuard no_grad;
  if (!yoke::fp32_matmul_available()) {
    std::printf("this build has no oneDNN fp32 product\n");
    return 1;
  }
  std::printf("threads %d, OpenBLAS kernels %s\n| out × in | rows | at::linear µs | oneDNN packed µs | speed-up | err |\n",
              threads, yoke::blas_kernel_name());
  const int64_t shapes[][2] = {{256, 256}, {512, 256}, {768, 256}, {1024, 256}, {256, 1024}, {8000, 256}};
  for (const auto& s : shapes) {
    for (int64_t rows : {1, 4, 20, 80, 160}) {
      at::manual_seed(1);
      const int64_t n = s[0], k = s[1];
      auto w = at::randn({n, k}) * 0.05, b = at::randn({n}) * 0.1;
      constexpr int kCalls = 100;
      auto xs = at::randn({kCalls, rows, k});
      const yoke::Fp32Matmul packed(w, b);
      const auto ref = at::linear(xs[0], w, b);
      const double err = (packed(xs[0].contiguous(), false) - ref).abs().max().item<double>() / ref.abs().max().item<double>();
      auto run = [&](bool onednn) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kCalls; ++i) {
          const auto x = xs[i];
          if (onednn) packed(x, false); else at::linear(x, w, b);
        }
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kCalls;
      };
      for (int i = 0; i < 20; ++i) run(i % 2);
      double best_ref = 1e30, best_packed = 1e30;
      for (int r = 0; r < 5; ++r) best_ref = std::min(best_ref, run(false)), best_packed = std::min(best_packed, run(true));
      std::printf("| %lld × %lld | %lld | %.1f | %.1f | %.2f | %.1e |\n", (long long)n, (long long)k, (long long)rows,
                  best_ref, best_packed, best_ref / best_packed, err);
    }
  }
}
