// yoke's oneDNN int8 product (model/int8_matmul.h) against its own formula computed here: the
// activations quantized with the call's scale and zero point, the integer sums exact, then the
// scales, the zero point's correction and the bias in fp32. Skips where the build has no oneDNN.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "margin.h"
#include "model/int8_linear.h"
#include "model/int8_matmul.h"

using namespace yoke;

namespace {

#define SKIP_WITHOUT_MATMUL() \
  if (!int8_matmul_available()) GTEST_SKIP() << "this build has no oneDNN int8 product (libdnnl-dev)"

struct Reference {
  at::Tensor y, magnitude;  // the formula's output, and the size of the fp32 terms it adds
};

// The product's definition, in double from the same fp32 quantization of x.
Reference reference(const Int8Weight& w, const at::Tensor& b, const at::Tensor& x) {
  const float qmax = int8_matmul_has_vnni() ? 255.0f : 127.0f;
  const float lo = std::min(x.min().item<float>(), 0.0f), hi = std::max(x.max().item<float>(), 0.0f);
  const float scale = hi > lo ? (hi - lo) / qmax : 1.0f;
  const float zero = std::clamp(std::nearbyint(-lo / scale), 0.0f, qmax);
  // The same fp32 steps as the kernel (multiply, add, clamp, round half to even).
  const auto q = (x * (1.0f / scale) + zero).clamp(0, qmax).round().to(at::kDouble);
  const auto wd = w.values.to(at::kDouble);
  const auto sums = at::matmul(q, wd.t());                                   // exact in double
  const auto col_scale = (w.scales * scale).to(at::kDouble).unsqueeze(0);    // fp32 products, as the kernel's
  const auto col_add = b.to(at::kDouble) - col_scale.squeeze(0) * double(zero) * wd.sum(1);
  return {sums * col_scale + col_add.unsqueeze(0), (sums * col_scale).abs() + col_add.abs().unsqueeze(0)};
}

// The largest error of y against the formula, over the bound of IsItsFormulaUpToFp32Rounding
// (below): 2⁻²⁰ of the size of the terms added; at most 1 when y is the formula.
double worst_error_over_bound(const at::Tensor& y, const Reference& ref) {
  return ((y.to(at::kDouble) - ref.y).abs() / (ref.magnitude * std::ldexp(1.0, -20) + 1e-30)).max().item<double>();
}

}  // namespace

// Each output is its integer sum (exact in int32: at most 255·127·K) turned into fp32, scaled and
// added to in fp32: three roundings of 2⁻²⁴ of the terms' sizes, and the terms may cancel, so the
// bound is relative to their sizes, not to the output; 2⁻²⁰ leaves a factor 16 over them.
TEST(Int8Matmul, IsItsFormulaUpToFp32Rounding) {
  SKIP_WITHOUT_MATMUL();
  at::manual_seed(11);
  const int64_t n = 40, k = 72;
  const auto w = Int8Weight::quantize(at::randn({n, k}) * 0.2);
  const auto b = at::randn({n});
  // Row counts inside, at and past a row bucket; inputs of both signs, one sign, and all zero.
  for (const int64_t rows : {1, 8, 15, 33, 130}) {
    for (const int kind : {0, 1, 2, 3}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + ", input kind " + std::to_string(kind));
      auto x = at::randn({rows, k}) * 1.5;
      if (kind == 1) x = x.abs() + 0.1;
      if (kind == 2) x = -x.abs();
      if (kind == 3) x.zero_();
      const Int8Matmul product(w, b);
      const auto y = product(x.contiguous(), false);
      ASSERT_EQ(y.sizes(), (std::vector<int64_t>{rows, n}));
      YOKE_EXPECT_AT_MOST(worst_error_over_bound(y, reference(w, b, x)), 1.0);
      // The relu is applied to the same numbers. Its primitive is another JIT'd kernel, which may
      // order the scale and the add differently: fp32 rounding of terms of a few units, ≪ 1e-5.
      YOKE_EXPECT_CLOSE(product(x.contiguous(), true), y.relu(), 0, 1e-5);
    }
  }
}

// Values a few ulps from the middle between two quantization steps: there the rounding of x·(1/scale)
// before "+ zero" decides the step, so a kernel whose compiler fused the multiply and the add (one
// rounding) quantizes some of them one step off and misses the formula by a whole weight. Random
// inputs almost never land there (a fused build passed the test above).
TEST(Int8Matmul, QuantizesHalfwayValuesAsTheUnfusedFormula) {
  SKIP_WITHOUT_MATMUL();
  const float qmax = int8_matmul_has_vnni() ? 255.0f : 127.0f;
  const float lo = -1.0f, hi = 1.55f;  // the range, held by the first two values
  const float scale = (hi - lo) / qmax, inv = 1.0f / scale;
  const float zero = std::clamp(std::nearbyint(-lo / scale), 0.0f, qmax);
  const int64_t rows = 61, k = 72;  // 4392 values: AVX-512's 16 a step and a tail of 8
  auto x = at::empty({rows, k});
  float* v = x.data_ptr<float>();
  std::mt19937 gen(5);
  int64_t fused_differs = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    float value = (float(i % int64_t(qmax)) + 0.5f - zero) * scale;
    const int ulps = int(gen() % 9) - 4;
    for (int u = 0; u < std::abs(ulps); ++u) value = std::nextafter(value, ulps > 0 ? 2.0f : -2.0f);
    v[i] = i == 0 ? lo : i == 1 ? hi : value;
    const volatile float product = v[i] * inv;  // volatile: rounded here, as the formula's
    const auto step = [&](float f) { return std::nearbyint(std::clamp(f, 0.0f, qmax)); };
    fused_differs += step(product + zero) != step(std::fma(v[i], inv, zero));
  }
  // The test can tell: this many values quantize differently when fused (171 of the 4392 with
  // VNNI's 8 bits, 159 with 7; with _mm512_fmadd_ps in the AVX-512 version this test failed).
  ASSERT_GT(fused_differs, 50) << "too few values where fusing changes the step";
  at::manual_seed(13);
  const auto w = Int8Weight::quantize(at::randn({24, k}) * 0.2);
  const auto b = at::randn({24});
  // One step off adds a weight of ~2⁻⁷ of a row's sum, far over the bound.
  YOKE_EXPECT_AT_MOST(worst_error_over_bound(Int8Matmul(w, b)(x, false), reference(w, b, x)), 1.0);
}

// Two decoding workers call one model's products at once: each call gets its own scratchpad, and
// the integer sums make every call's result the same bits as alone.
TEST(Int8Matmul, CallsFromSeveralThreadsGiveTheSameBits) {
  SKIP_WITHOUT_MATMUL();
  at::manual_seed(12);
  const Int8Matmul product(Int8Weight::quantize(at::randn({64, 48})), at::randn({64}));
  const int64_t rows_of[] = {3, 20, 70, 128};
  std::vector<at::Tensor> inputs, alone;
  for (int64_t rows : rows_of) {
    inputs.push_back(at::randn({rows, 48}));
    alone.push_back(product(inputs.back(), false));
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 25; ++round) {
        const size_t i = size_t(t + round) % inputs.size();
        if (!at::equal(product(inputs[i], false), alone[i])) ++mismatches[size_t(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
}
