// int8 decoding (model/int8_linear.h, store/int8_model.h, `yoke quantize`): the int8 product
// against fp32 within the rounding it makes, the effective output matrix of every estimator,
// models of every estimator and tie decoding like their fp32 selves, and the command end to end.
// Every int8 test skips where this LibTorch has no quantized engine.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "cli_helpers.h"
#include "decode/force_decode.h"
#include "compat/quantized.h"
#include "model/int8_kernel.h"
#include "model/int8_linear.h"
#include "tiny_model.h"
#include "store/checkpoint.h"
#include "store/model_store.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

#define SKIP_WITHOUT_INT8() \
  if (!int8_available()) GTEST_SKIP() << "this LibTorch has no quantized engine"

}  // namespace

// |y8 − y| for y = x·wᵀ + b is bounded by the rounding of its two operands: each weight is off by
// at most half its row's step s_w = max|w_row| / 127, each activation by at most half the
// activation step s_x = (max x − min x) / 255 (twice that where 7 bits are kept: the engine's
// compat::int8_reduce_range, or int8_matmul without VNNI), so per output |Δ| ≤ Σ_k (|x_k|·s_w/2 + |w_k|·s_x + s_w·s_x/2),
// plus fp32 summation error far below it. Where the dequantized weights are multiplied in bf16
// (Int8Kernel::bf16) each weight, each activation and the product are rounded to 8 significant
// bits instead, at most 2⁻⁹ of their size each: Σ_k |x_k|·|w_k| · 2⁻⁷ covers the three. The fp32
// kernel has the weights' rounding only.
// The sum of the two bounds holds on any processor, engine and kernel; each kernel this LibTorch
// has is checked.
TEST(Int8, LinearIsWithinTheRoundingBoundOfFp32) {
  SKIP_WITHOUT_INT8();
  at::manual_seed(3);
  const int64_t n = 48, k = 40;
  auto w = at::randn({n, k}) * 0.1, b = at::randn({n}), x = at::randn({3, 5, k});
  w[7].zero_();  // an all-zero row (a padding row) stays zero
  const auto q = Int8Weight::quantize(w);
  ASSERT_EQ(q.values.scalar_type(), at::kChar);
  EXPECT_LE(q.values.abs().max().item<int>(), 127);
  // Round to nearest: no element is further than half a step from its weight, and some come
  // close to it by design, so this is a bound, not a tolerance with a margin.
  EXPECT_TRUE(at::allclose(q.dequantized(), w, 0, q.scales.max().item<double>() / 2 + 1e-7));
  EXPECT_TRUE(q.dequantized()[7].eq(0).all().item<bool>());
  for (const auto kernel : {Int8Kernel::bf16, Int8Kernel::int8, Int8Kernel::fp32}) {
  SCOPED_TRACE(name_of(kernel));
  if (kernel == Int8Kernel::bf16 && !int8_kernel_available(Int8Kernel::bf16)) continue;
  if (kernel == Int8Kernel::int8 && !int8_kernel_available(Int8Kernel::int8)) continue;
  Int8Linear lin(q, b, kernel);
  const auto ref = at::linear(x, w, b), y = lin(x);
  ASSERT_EQ(y.sizes(), ref.sizes());
  const auto s_w = q.scales.unsqueeze(0);                                               // [1, n]
  const double s_x = (x.max() - x.min()).item<double>() / 255 * 2;                      // 7-bit case
  const auto x2 = x.reshape({-1, k});
  auto bound = x2.abs().sum(1, true) * s_w / 2 + (w.abs().sum(1) * s_x).unsqueeze(0) + double(k) * s_w * s_x / 2 +
               at::matmul(x2.abs(), (w.abs() + s_w.t() / 2).t()) * std::ldexp(1.0, -7);
  const auto err = (y.reshape({-1, n}) - ref.reshape({-1, n})).abs();
  EXPECT_TRUE((err <= bound + 1e-4).all().item<bool>()) << "worst excess " << (err - bound).max().item<double>();
  // It is a real product, not a copy of fp32: the error is small against the outputs' size.
  YOKE_EXPECT_AT_MOST(err.max().item<double>(), 0.05 * ref.abs().max().item<double>());
  // With relu: the same numbers, clamped at zero.
  YOKE_EXPECT_CLOSE(lin(x, true), at::relu(y), 0, 1e-5);
  }
}

// The kernel is the fastest quantized one only where it saves at least a tenth of fp32's time.
TEST(Int8, TheKernelIsPickedByItsTimeAndIsNeverSlowerThanFp32) {
  // bf16 fastest, well under fp32: bf16.
  EXPECT_EQ(pick_int8_kernel({1.0, 0.6, 0.8}), Int8Kernel::bf16);
  // int8 fastest: int8 (the Xeon without AMX of issue 50: bf16 at 1/0.69 of fp32's time).
  EXPECT_EQ(pick_int8_kernel({1.0, 1.45, 0.8}), Int8Kernel::int8);
  // Both slower than fp32, or faster by less than the noise allowance: fp32.
  EXPECT_EQ(pick_int8_kernel({1.0, 1.45, 1.2}), Int8Kernel::fp32);
  EXPECT_EQ(pick_int8_kernel({1.0, 0.95, NAN}), Int8Kernel::fp32);
  EXPECT_EQ(pick_int8_kernel({1.0, NAN, 0.9}), Int8Kernel::int8);  // exactly the allowance
  // A kernel this LibTorch lacks is never picked.
  EXPECT_EQ(pick_int8_kernel({1.0, NAN, NAN}), Int8Kernel::fp32);
  EXPECT_EQ(pick_int8_kernel({1.0, 0.5, NAN}), Int8Kernel::bf16);
  for (const auto k : {Int8Kernel::bf16, Int8Kernel::int8, Int8Kernel::fp32})
    EXPECT_EQ(int8_kernel_from_name(name_of(k)), k);
  EXPECT_FALSE(int8_kernel_from_name("fp16").has_value());
}

// Measuring times every kernel this LibTorch has, and only those.
TEST(Int8, MeasuringTimesEachAvailableKernel) {
  at::manual_seed(5);
  const Int8Weight a = Int8Weight::quantize(at::randn({64, 32})), b = Int8Weight::quantize(at::randn({32, 64}));
  const Int8KernelTimes t = measure_int8_kernels({&a, &b});
  EXPECT_TRUE(std::isfinite(t.fp32) && t.fp32 > 0) << t.fp32;
  EXPECT_EQ(std::isfinite(t.bf16), int8_kernel_available(Int8Kernel::bf16)) << t.bf16;
  EXPECT_EQ(std::isfinite(t.int8), int8_kernel_available(Int8Kernel::int8)) << t.int8;
  // The test process pins its kernel (test_main.cpp): choosing keeps it, and says so.
  const Int8Kernel pinned = choose_int8_kernel({&a, &b});
  EXPECT_EQ(int8_kernel(), pinned);
  EXPECT_EQ(name_of(pinned), std::getenv("YOKE_INT8_KERNEL"));
  EXPECT_NE(int8_kernel_reason().find("pinned"), std::string::npos) << int8_kernel_reason();
}

// The bf16 kernel pads its rows to row_bucket(rows) so that oneDNN sees few shapes: never fewer
// rows than asked, little padding, and few distinct sizes over every row count a beam search or
// an encoder batch makes.
TEST(Int8, RowBucketsAreFewAndPadLittle) {
  std::set<int64_t> sizes;
  for (int64_t rows = 1; rows <= 4096; ++rows) {
    const int64_t b = row_bucket(rows);
    ASSERT_GE(b, rows);
    if (rows <= 64) EXPECT_LT(b - rows, 8) << rows;
    else EXPECT_LT(double(b - rows), 0.25 * double(rows)) << rows;
    EXPECT_EQ(row_bucket(b), b) << "a bucket is its own bucket: " << b;
    sizes.insert(b);
  }
  EXPECT_LE(sizes.size(), 40u);
}

// ℓ = h·Mᵀ + b with M, b from affine_logits is exactly what the estimator computes, for every
// estimator, tie and factored matrices (fp32, so only summation order differs).
TEST(Int8, AffineLogitsAreTheEstimatorsLogits) {
  at::NoGradGuard no_grad;
  for (Tie tie : {Tie::none, Tie::decoder, Tie::all, Tie::src_tgt}) {
    for (Estimator e : {Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance, Estimator::cosine}) {
      for (int rank : {0, 8}) {
        at::manual_seed(5);
        auto cfg = tiny_config(tie, e);
        cfg.factored_rank = rank;
        auto model = build_model(cfg);
        auto h = at::randn({7, cfg.d_model});
        const auto a = model->embeddings->affine_logits();
        auto mine = at::matmul(h, a.matrix.t());
        if (a.bias.defined()) mine = mine + a.bias;
        const auto ref = model->embeddings->logits(h);
        YOKE_EXPECT_CLOSE(mine, ref, 1e-4, 1e-4)
            << name_of(tie) << " " << name_of(e) << " rank " << rank << ": " << (mine - ref).abs().max().item<double>();
      }
    }
  }
}

// A model of every estimator and tie, switched to int8, gives the log-probabilities of its fp32
// self up to the rounding of Int8.LinearIsWithinTheRoundingBoundOfFp32 (about 0.5% of a
// product's range per product), carried through 2 + 2 layers and the output matrix: the error
// scales with the spread of the log-probabilities (8 to 26 nats on these models, whose word
// rows are scaled by random factors so that the estimators' norms matter). Measured with 8-bit
// activations: at most 1.2% of the spread (yoke's oneDNN product with VNNI, every estimator, tie
// and OpenBLAS family), so 3%; where the activations keep 7 bits (no VNNI, or the engine's
// compat::int8_reduce_range) the activation rounding doubles and so did the error, 2.2% (under
// DNNL_MAX_CPU_ISA=AVX2, Haswell's kernels), so 6% there. A wrong scale, a missing bias or an
// estimator left out is off by a good part of the spread.
TEST(Int8, EveryEstimatorAndTieDecodesLikeFp32) {
  SKIP_WITHOUT_INT8();
  const bool seven_bits = int8_kernel() == Int8Kernel::int8 && int8_activations_keep_7_bits();
  for (Tie tie : {Tie::none, Tie::decoder, Tie::all, Tie::src_tgt}) {
    for (Estimator e : {Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance, Estimator::cosine}) {
      at::manual_seed(9);
      auto cfg = tiny_config(tie, e, TinySize{40, 32, 2, 64});
      auto model = build_model(cfg);
      model->eval();
      // Scaled-up output rows, so that the estimators' norms differ from row to row.
      {
        at::NoGradGuard no_grad;
        for (auto& p : model->named_parameters(true))
          if (p.key().rfind("embeddings.", 0) == 0) p.value().mul_(at::rand({p.value().size(0), 1}) * 3 + 0.5);
      }
      const auto ref = forced_log_probs(*model, 17, 40);
      model->use_int8(model->quantize_int8());
      ASSERT_TRUE(model->uses_int8());
      const auto got = forced_log_probs(*model, 17, 40);
      const double diff = (got - ref).abs().max().item<double>();
      const double range = (ref.max() - ref.min()).item<double>();
      YOKE_EXPECT_AT_MOST(diff, (seven_bits ? 0.06 : 0.03) * range) << name_of(tie) << " " << name_of(e) << ", log-probabilities spread over " << range;
      EXPECT_GT(diff, 0.0) << "int8 products were not used";
    }
  }
}

// `yoke quantize` on the tiny trained model: the directory carries the vocabularies, loads as an
// int8 model, translates (beam 5) mostly as fp32 does and scores within a small margin.
TEST(QuantizeCli, Int8ModelTranslatesAndScoresLikeFp32) {
  SKIP_WITHOUT_INT8();
  const auto dir = tiny_translation_model();
  const auto out = work_dir() / "tiny_int8";
  fs::remove_all(out);
  const auto log = work_dir() / "quantize.log";
  ASSERT_EQ(run({YOKE_BINARY, "quantize", "--model", dir.string(), "--out", out.string()}, log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("to int8"), std::string::npos) << slurp(log);
  EXPECT_TRUE(fs::exists(out / "spm.model"));
  EXPECT_TRUE(fs::exists(out / "checkpoint_best.ykp"));
  const auto m = load_model(out.string());
  EXPECT_TRUE(m.int8);
  EXPECT_TRUE(m.model->uses_int8());
  EXPECT_FALSE(load_model(dir.string()).int8);

  const std::string src = (data_dir() / "test.toy.src.txt").string();
  const auto fp32 = lines_of(output_of({YOKE_BINARY, "translate", "--model", dir.string(), "--input", src, "--beam", "5"}));
  const auto int8 = lines_of(output_of({YOKE_BINARY, "translate", "--model", out.string(), "--input", src, "--beam", "5"}));
  // translate names the pinned kernel (and, for int8, which product runs it).
  const std::string said = slurp(work_dir() / "stderr.txt");
  EXPECT_NE(said.find("(int8 weights; products in " + std::string(std::getenv("YOKE_INT8_KERNEL")) + " ("), std::string::npos) << said;
  EXPECT_NE(said.find("pinned by YOKE_INT8_KERNEL))"), std::string::npos) << said;
  // Unpinned, `yoke` measures the kernels and says what it found; the output is a translation
  // per line whichever kernel won.
  const auto measured = lines_of(output_of({"env", "-u", "YOKE_INT8_KERNEL", YOKE_BINARY, "translate", "--model",
                                            out.string(), "--input", src, "--beam", "5"}));
  EXPECT_EQ(measured.size(), fp32.size());
  EXPECT_NE(slurp(work_dir() / "stderr.txt").find(" of fp32's time))"), std::string::npos)
      << slurp(work_dir() / "stderr.txt");
  ASSERT_EQ(fp32.size(), int8.size());
  ASSERT_GT(fp32.size(), 10u);
  size_t same = 0;
  for (size_t i = 0; i < fp32.size(); ++i) same += fp32[i] == int8[i];
  // Measured: 30 of 30 with the quantized engine's kernel, 23 of 30 with the bf16 one. This model
  // has trained 30 updates: its next-token distributions are flat, full of near ties that any
  // rounding may flip (the trained Multi30k model keeps 93% of its outputs and its BLEU,
  // docs/performance.md); the scores below are the finer check.
  YOKE_EXPECT_SHORTFALL(double(same), 0.5 * double(fp32.size()), double(fp32.size())) << same << " of " << fp32.size() << " the same";

  // The same translations scored by both models (per-subword mean log-probability): measured
  // differences ≤ 0.01 nats; 0.05 as in Int8.EveryEstimatorAndTieDecodesLikeFp32.
  const auto hyp = work_dir() / "tiny_fp32_hyp.txt";
  {
    std::ofstream f(hyp);
    for (const auto& l : fp32) f << l << "\n";
  }
  auto score = [&](const fs::path& model) {
    std::vector<double> s;
    for (const auto& l : lines_of(output_of({YOKE_BINARY, "score-pairs", "--model", model.string(), "--src", src,
                                             "--tgt", hyp.string(), "--lenpen", "1"})))
      s.push_back(std::stod(l));
    return s;
  };
  const auto a = score(dir), b = score(out);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) YOKE_EXPECT_NEAR(a[i], b[i], 0.05) << "line " << i;
}

TEST(QuantizeCli, ErrorsNameTheFile) {
  const auto log = work_dir() / "quantize_err.log";
  // Not a model directory: the error names it and what is missing.
  const auto empty = work_dir() / "not_a_model";
  fs::create_directories(empty);
  EXPECT_EQ(run({YOKE_BINARY, "quantize", "--model", empty.string(), "--out", (work_dir() / "q1").string()}, log), 2);
  EXPECT_NE(slurp(log).find(empty.string()), std::string::npos) << slurp(log);
  EXPECT_NE(slurp(log).find("checkpoint_best.ykp"), std::string::npos) << slurp(log);
  // A checkpoint that is not one: the error names the file.
  const auto broken = work_dir() / "broken_model";
  fs::create_directories(broken);
  std::ofstream(broken / "checkpoint_best.ykp") << "not a checkpoint";
  EXPECT_EQ(run({YOKE_BINARY, "quantize", "--model", broken.string(), "--out", (work_dir() / "q2").string()}, log), 2);
  EXPECT_NE(slurp(log).find((broken / "checkpoint_best.ykp").string()), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(work_dir() / "q2" / "checkpoint_best.ykp"));
  if (!int8_available()) return;
  // An int8 model is not quantized twice; an --out that holds a model is not overwritten.
  const auto dir = tiny_translation_model();
  const auto q = work_dir() / "tiny_int8_twice";
  fs::remove_all(q);
  ASSERT_EQ(run({YOKE_BINARY, "quantize", "--model", dir.string(), "--out", q.string()}, log), 0) << slurp(log);
  EXPECT_EQ(run({YOKE_BINARY, "quantize", "--model", q.string(), "--out", (work_dir() / "q3").string()}, log), 2);
  EXPECT_NE(slurp(log).find("already an int8 model"), std::string::npos) << slurp(log);
  EXPECT_NE(slurp(log).find((q / "checkpoint_best.ykp").string()), std::string::npos) << slurp(log);
  EXPECT_EQ(run({YOKE_BINARY, "quantize", "--model", dir.string(), "--out", q.string()}, log), 2);
  EXPECT_NE(slurp(log).find("is not empty (it holds"), std::string::npos) << slurp(log);
  // Nor is a folder that holds anything else (a data set, say); --force replaces it, saying so.
  const auto data = work_dir() / "q-over-data";
  fs::remove_all(data);
  fs::create_directories(data);
  std::ofstream(data / "train.src") << "precious\n";
  EXPECT_EQ(run({YOKE_BINARY, "quantize", "--model", dir.string(), "--out", data.string()}, log), 2);
  EXPECT_EQ(slurp(data / "train.src"), "precious\n");
  ASSERT_EQ(run({YOKE_BINARY, "quantize", "--model", dir.string(), "--out", data.string(), "--force"}, log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("replaced " + data.string() + " (--force)"), std::string::npos) << slurp(log);
  EXPECT_TRUE(fs::exists(data / "checkpoint_best.ykp"));
  EXPECT_FALSE(fs::exists(data / "train.src"));
}
