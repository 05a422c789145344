#include "model/row_layer_norm.h"

#include "compat/torch.h"  // at::parallel_for, compiled with OpenMP

#include <cmath>
#include <cstring>

#include "util/float_vectors.h"

// CMakeLists.txt compiles this file with -ffp-contract=off (util/float_vectors.h).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace yoke {

using namespace float_vectors;

namespace {

// Elements [j, n) of a row (fewer than 16) in a block of zeros.
YOKE_VECTOR_INLINE Floats16 tail16(const float* x, int64_t j, int64_t n) {
  float tail[16] = {};
  std::memcpy(tail, x + j, size_t(n - j) * sizeof(float));
  return load16(tail);
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void layer_norm_row(const float* x, const float* weight, const float* bias, float eps, int64_t n, float* y) {
  Floats16 acc = {};
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) acc += load16(x + j);
  if (j < n) acc += tail16(x, j, n);
  const float mean = fold_halves(acc) / float(n);

  // Σ (x − mean)², with the tail's missing lanes as zeros (not as −mean).
  acc = Floats16{};
  for (j = 0; j + 16 <= n; j += 16) {
    const Floats16 d = load16(x + j) - mean;
    acc += d * d;
  }
  if (j < n) {
    const Floats16 d = tail16(x, j, n) - mean;
    acc += first_lanes(d * d, n - j);
  }
  const float rstd = 1.0f / std::sqrt(fold_halves(acc) / float(n) + eps);

  for (j = 0; j + 16 <= n; j += 16)
    store16(y + j, (load16(x + j) - mean) * rstd * load16(weight + j) + load16(bias + j));
  for (; j < n; ++j) y[j] = (x[j] - mean) * rstd * weight[j] + bias[j];
}

bool row_layer_norm_fits(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const auto fp32_cpu = [](const at::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == at::kFloat; };
  return !at::GradMode::is_enabled() && x.dim() >= 1 && x.size(-1) > 0 && fp32_cpu(x) && fp32_cpu(weight) &&
         fp32_cpu(bias) && weight.dim() == 1 && bias.dim() == 1 && weight.size(0) == x.size(-1) &&
         bias.size(0) == x.size(-1);
}

at::Tensor row_layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, float eps) {
  const auto in = x.contiguous(), w = weight.contiguous(), b = bias.contiguous();
  auto out = at::empty_like(in);
  const int64_t n = in.size(-1), rows = in.numel() / n;
  const float *px = in.data_ptr<float>(), *pw = w.data_ptr<float>(), *pb = b.data_ptr<float>();
  float* py = out.data_ptr<float>();
  // A row of 256 is about 0.1 µs: 256 rows a task.
  at::parallel_for(0, rows, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) layer_norm_row(px + r * n, pw, pb, eps, n, py + r * n);
  });
  return out;
}

}  // namespace yoke
