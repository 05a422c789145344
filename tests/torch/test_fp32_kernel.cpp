// yoke's fp32 decoding product on oneDNN (model/fp32_matmul.h) and the measured choice between it
// and at::linear (model/fp32_kernel.h).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cli_helpers.h"
#include "margin.h"
#include "model/fp32_kernel.h"
#include "model/fp32_matmul.h"
#include "store/model_store.h"
#include "util/thread_policy.h"
#include "tiny_model.h"

using namespace yoke;
using namespace yoke::test;

#define SKIP_WITHOUT_ONEDNN() \
  if (!fp32_matmul_available()) GTEST_SKIP() << "this build has no oneDNN product (libdnnl-dev beside Debian's LibTorch)"

// Both products sum K float products, in different orders (OpenBLAS's blocks against oneDNN's):
// each result is within γ_K·Σ_k|x_k·w_k| of the exact sum (γ_K ≈ K·2⁻²⁴, the textbook bound of
// any summation order), so they differ by at most twice that, plus the bias's one rounding.
// Checked element by element, for row counts on both sides of the at::linear cut (4 rows), with
// and without bias and relu, on a 3-D input.
TEST(Fp32Matmul, MatchesAtLinearWithinTheSummationBound) {
  SKIP_WITHOUT_ONEDNN();
  at::NoGradGuard no_grad;
  const double u = std::ldexp(1.0, -24);
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{256, 256}, {1024, 256}, {96, 1024}, {3000, 64}}) {
    for (int64_t rows : {1, 3, 4, 20, 130, 300}) {  // 130 and 300: cut into calls (product_rows.h)
      for (bool with_bias : {true, false}) {
        for (bool relu : {false, true}) {
          at::manual_seed(rows * 7 + n);
          auto w = at::randn({n, k}) * 0.05, b = with_bias ? at::randn({n}) : at::Tensor();
          auto x = at::randn({rows, 1, k});
          const Fp32Matmul packed(w, b);
          auto got = packed(x, relu);
          ASSERT_EQ(got.sizes(), (at::IntArrayRef{rows, 1, n}));
          auto ref = at::linear(x, w, b);
          if (relu) ref = ref.relu();
          auto bound = at::linear(x.abs(), w.abs()) * (2.0 * double(k) * u);
          if (with_bias) bound = bound + b.abs() * u;
          const double worst = ((got - ref).abs() / bound.clamp_min(1e-30)).max().item<double>();
          // The bound, as a ratio: at most 1 (its margin is recorded as 1 / worst).
          YOKE_EXPECT_AT_MOST(worst, 1.0) << n << "×" << k << ", " << rows << " rows";
        }
      }
    }
  }
}

TEST(Fp32Kernel, PicksOnednnOnlyWhenClearlyFaster) {
  EXPECT_EQ(pick_fp32_kernel({1.0, 0.5}), Fp32Kernel::onednn);
  EXPECT_EQ(pick_fp32_kernel({1.0, kFp32MaxTimeShare}), Fp32Kernel::onednn);
  EXPECT_EQ(pick_fp32_kernel({1.0, 0.95}), Fp32Kernel::openblas);  // within the timings' noise
  EXPECT_EQ(pick_fp32_kernel({1.0, 2.0}), Fp32Kernel::openblas);
  EXPECT_EQ(pick_fp32_kernel({1.0, NAN}), Fp32Kernel::openblas);  // not built
  EXPECT_EQ(fp32_kernel_from_name("onednn"), Fp32Kernel::onednn);
  EXPECT_EQ(fp32_kernel_from_name("openblas"), Fp32Kernel::openblas);
  EXPECT_FALSE(fp32_kernel_from_name("mkl"));
}

TEST(Fp32Kernel, MeasuresBothKernelsOnTheGivenMatrices) {
  SKIP_WITHOUT_ONEDNN();
  const auto t = measure_fp32_kernels({at::randn({64, 32}), at::randn({500, 32})});
  EXPECT_TRUE(std::isfinite(t.openblas) && t.openblas > 0) << t.openblas;
  EXPECT_TRUE(std::isfinite(t.onednn) && t.onednn > 0) << t.onednn;
}

// A model of every estimator and tie on the packed products gives the log-probabilities of its
// at::linear self up to float rounding: each product within the summation bound above (relative
// 2·K·2⁻²⁴ ≈ 4·10⁻⁶ of its terms' size at K = 64), carried through 2 + 2 layers, layer norms and
// the output matrix. Measured at most 3·10⁻⁷ of the log-probabilities' spread; 10⁻⁴ of it
// leaves room for other summation orders, where a missing bias or relu, or a wrong matrix, is
// off by a good part of the spread.
TEST(Fp32Decoding, EveryEstimatorAndTieDecodesLikeAtLinear) {
  SKIP_WITHOUT_ONEDNN();
  for (Tie tie : {Tie::none, Tie::decoder, Tie::all, Tie::src_tgt}) {
    for (Estimator e : {Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance, Estimator::cosine}) {
      at::manual_seed(9);
      auto model = build_model(tiny_config(tie, e, TinySize{40, 32, 2, 64}));
      model->eval();
      const auto ref = forced_log_probs(*model, 17, 40);
      EXPECT_FALSE(model->uses_packed_fp32());
      model->use_packed_fp32();
      ASSERT_TRUE(model->uses_packed_fp32());
      EXPECT_FALSE(model->uses_int8());
      const auto got = forced_log_probs(*model, 17, 40);
      const double range = (ref.max() - ref.min()).item<double>();
      YOKE_EXPECT_AT_MOST((got - ref).abs().max().item<double>(), 1e-4 * range) << name_of(tie) << " " << name_of(e);
    }
  }
}

// `yoke translate` on the tiny trained model, pinned to each kernel and unpinned: the log line
// names the kernel and how it was chosen, and the translations agree (the scores differ by float
// rounding only, far below the gaps between this model's candidates: measured 30 of 30 the same).
TEST(Fp32Decoding, TranslateNamesTheKernelAndBothTranslateAlike) {
  SKIP_WITHOUT_ONEDNN();
  const auto dir = tiny_translation_model();
  const std::string src = (data_dir() / "test.toy.src.txt").string();
  auto translate = [&](const std::string& kernel) {
    std::vector<std::string> args{"env"};
    if (kernel.empty()) args.push_back("-u"), args.push_back("YOKE_FP32_KERNEL");
    else args.push_back("YOKE_FP32_KERNEL=" + kernel);
    for (const std::string a : {std::string(YOKE_BINARY), std::string("translate"), std::string("--model"), dir.string(),
                                std::string("--input"), src, std::string("--beam"), std::string("5")})
      args.push_back(a);
    return lines_of(output_of(args));
  };
  const auto blas = translate("openblas");
  EXPECT_NE(slurp(work_dir() / "stderr.txt").find("(fp32 products in openblas (pinned by YOKE_FP32_KERNEL))"), std::string::npos)
      << slurp(work_dir() / "stderr.txt");
  const auto dnnl = translate("onednn");
  EXPECT_NE(slurp(work_dir() / "stderr.txt").find("(fp32 products in onednn (pinned by YOKE_FP32_KERNEL))"), std::string::npos)
      << slurp(work_dir() / "stderr.txt");
  const auto measured = translate("");
  EXPECT_NE(slurp(work_dir() / "stderr.txt").find(" of openblas's time))"), std::string::npos) << slurp(work_dir() / "stderr.txt");
  ASSERT_GT(blas.size(), 10u);
  ASSERT_EQ(dnnl.size(), blas.size());
  ASSERT_EQ(measured.size(), blas.size());
  size_t same = 0;
  for (size_t i = 0; i < blas.size(); ++i) same += blas[i] == dnnl[i];
  YOKE_EXPECT_SHORTFALL(double(same), 0.8 * double(blas.size()), double(blas.size())) << same << " of " << blas.size();
}

// The math settings a yoke program starts with keep oneDNN off AMX (util/thread_policy.h,
// kOneDnnMaxIsa) unless the environment says otherwise: this test binary, started again with
// --print-math-env, prints what use_fast_math_library_settings left.
TEST(Fp32Kernel, OneDnnStaysOffAmxUnlessTold) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  EXPECT_NE(output_of({"env", "-u", "DNNL_MAX_CPU_ISA", self, "--print-math-env"}).find(std::string("DNNL_MAX_CPU_ISA=") + kOneDnnMaxIsa + "\n"),
            std::string::npos);
  EXPECT_NE(output_of({"env", "DNNL_MAX_CPU_ISA=AVX2", self, "--print-math-env"}).find("DNNL_MAX_CPU_ISA=AVX2\n"),
            std::string::npos);
}
