#include "model/int8_matmul.h"

#include <stdexcept>

#include "model/int8_linear.h"
#include "util/error.h"

#ifndef YOKE_HAVE_ONEDNN

namespace yoke {

bool int8_matmul_available() { return false; }
bool int8_matmul_has_vnni() { return false; }
std::string int8_matmul_isa() { return "none"; }
struct Int8Matmul::State {};
Int8Matmul::Int8Matmul(const Int8Weight&, const at::Tensor&) {
  throw InputError("this build has no oneDNN int8 product (it needs Debian's libdnnl-dev and Debian's LibTorch)");
}
Int8Matmul::~Int8Matmul() = default;
at::Tensor Int8Matmul::operator()(const at::Tensor&, bool) const { throw std::logic_error("Int8Matmul: not built"); }

}  // namespace yoke

#else

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "model/onednn_matmul.h"

namespace yoke {

namespace {

using namespace onednn;  // memory, tag, dt, cpu_engine

// The smallest and largest of n floats (SSE2: every x86-64 processor has it). Four lane sets, so
// that no min or max waits for the one before it.
std::pair<float, float> range_of(const float* x, int64_t n) {
  float lo = INFINITY, hi = -INFINITY;
  int64_t i = 0;
  if (n >= 16) {
    __m128 mn[4], mx[4];
    for (int j = 0; j < 4; ++j) mn[j] = mx[j] = _mm_loadu_ps(x + 4 * j);
    for (i = 16; i + 16 <= n; i += 16) {
      for (int j = 0; j < 4; ++j) {
        const __m128 v = _mm_loadu_ps(x + i + 4 * j);
        mn[j] = _mm_min_ps(mn[j], v);
        mx[j] = _mm_max_ps(mx[j], v);
      }
    }
    alignas(16) float a[16], b[16];
    for (int j = 0; j < 4; ++j) _mm_store_ps(a + 4 * j, mn[j]), _mm_store_ps(b + 4 * j, mx[j]);
    for (int j = 0; j < 16; ++j) lo = std::min(lo, a[j]), hi = std::max(hi, b[j]);
  }
  for (; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  return {lo, hi};
}

// range_of (above) and quantize (below) for AVX-512: 16 floats an instruction instead of 4, the same
// results (min and max are exact; quantize multiplies and adds with a rounding each, as
// CMakeLists.txt compiles this file with -ffp-contract=off, and converts with the same rounding,
// to values already in [0, qmax]). They were 4–5% of int8 decoding (perf, AMD EPYC).
__attribute__((target("avx512f"))) std::pair<float, float> range_of_avx512(const float* x, int64_t n) {
  float lo = INFINITY, hi = -INFINITY;
  int64_t i = 0;
  if (n >= 64) {
    __m512 mn[4], mx[4];
    for (int j = 0; j < 4; ++j) mn[j] = mx[j] = _mm512_loadu_ps(x + 16 * j);
    for (i = 64; i + 64 <= n; i += 64) {
      for (int j = 0; j < 4; ++j) {
        const __m512 v = _mm512_loadu_ps(x + i + 16 * j);
        mn[j] = _mm512_min_ps(mn[j], v);
        mx[j] = _mm512_max_ps(mx[j], v);
      }
    }
    for (int j = 0; j < 4; ++j) lo = std::min(lo, _mm512_reduce_min_ps(mn[j])), hi = std::max(hi, _mm512_reduce_max_ps(mx[j]));
  }
  for (; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  return {lo, hi};
}

__attribute__((target("avx512f"))) void quantize_avx512(const float* x, uint8_t* q, int64_t n, float inv_scale,
                                                         float zero, float qmax) {
  const __m512 s = _mm512_set1_ps(inv_scale), z = _mm512_set1_ps(zero), lo = _mm512_setzero_ps(), hi = _mm512_set1_ps(qmax);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 y = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), s), z), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(y)));
  }
  for (; i < n; ++i) q[i] = uint8_t(std::nearbyint(std::clamp(x[i] * inv_scale + zero, 0.0f, qmax)));
}

const bool kHasAvx512 = __builtin_cpu_supports("avx512f");

// Per output column: the scale s_x·s_w[n] and what is added after it, b[n] − s_x·s_w[n]·z·Σ_k w[n,k],
// four columns at a time in the same order of operations as one at a time.
void column_terms(const float* ws, const float* sums, const float* b, float scale, float zero, float* cs, float* ca,
                  int64_t n) {
  int64_t j = 0;
  const __m128 s = _mm_set1_ps(scale), z = _mm_set1_ps(zero);
  for (; j + 4 <= n; j += 4) {
    const __m128 c = _mm_mul_ps(s, _mm_loadu_ps(ws + j));
    _mm_storeu_ps(cs + j, c);
    _mm_storeu_ps(ca + j, _mm_sub_ps(_mm_loadu_ps(b + j), _mm_mul_ps(_mm_mul_ps(c, z), _mm_loadu_ps(sums + j))));
  }
  for (; j < n; ++j) {
    cs[j] = scale * ws[j];
    ca[j] = b[j] - cs[j] * zero * sums[j];
  }
}

// q = clamp(round(x·inv_scale + zero), 0, qmax), rounding to nearest even as _mm_cvtps_epi32 does.
void quantize(const float* x, uint8_t* q, int64_t n, float inv_scale, float zero, float qmax) {
  const __m128 s = _mm_set1_ps(inv_scale), z = _mm_set1_ps(zero), lo = _mm_setzero_ps(), hi = _mm_set1_ps(qmax);
  auto four = [&](const float* p) {
    return _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(p), s), z), lo), hi));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_packs_epi32(four(x + i), four(x + i + 4));
    const __m128i b = _mm_packs_epi32(four(x + i + 8), four(x + i + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm_packus_epi16(a, b));
  }
  for (; i < n; ++i) q[i] = uint8_t(std::nearbyint(std::clamp(x[i] * inv_scale + zero, 0.0f, qmax)));
}

// One matmul primitive per shape, shared by every matrix of that shape: (rows, K, N, relu).
std::shared_ptr<const onednn::Matmul> primitive_for(int64_t rows, int64_t k, int64_t n, bool relu) {
  return onednn::matmul_for({dt::u8, rows, k, n, relu}, [&] {
    const memory::desc src({rows, k}, dt::u8, tag::ab), wei({k, n}, dt::s8, tag::any), dst({rows, n}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});  // one scale per output column
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, memory::desc({1, n}, dt::f32, tag::ab));
    if (relu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
    // The caller's scratchpad: with the library's own, one primitive run from two decoding workers
    // at once would share it.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, dst), attr, cpu_engine());
  });
}

}  // namespace

bool int8_matmul_available() { return true; }

bool int8_matmul_has_vnni() {
  using isa = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case isa::avx512_core_vnni:
    case isa::avx512_core_bf16:
    case isa::avx512_core_amx:
    case isa::avx2_vnni: return true;
    default: return false;
  }
}

std::string int8_matmul_isa() {
  using isa = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case isa::sse41: return "sse41";
    case isa::avx: return "avx";
    case isa::avx2: return "avx2";
    case isa::avx2_vnni: return "avx2_vnni";
    case isa::avx512_core: return "avx512_core";
    case isa::avx512_core_vnni: return "avx512_core_vnni";
    case isa::avx512_core_bf16: return "avx512_core_bf16";
    case isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

struct Int8Matmul::State {
  int64_t n = 0, k = 0;
  float qmax = 255;
  at::Tensor values;         // int8 [N, K], oneDNN's weights [K, N] in layout ba
  at::Tensor scales;         // fp32 [N]
  at::Tensor column_sums;    // fp32 [N]: Σ_k w[n, k], for the activations' zero point
  at::Tensor bias;           // fp32 [N], zeros without one
  std::unique_ptr<onednn::PackedWeights> packed;  // values, in each layout a primitive asked for
};

Int8Matmul::Int8Matmul(const Int8Weight& w, const at::Tensor& bias) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.n = w.values.size(0);
  s.k = w.values.size(1);
  s.qmax = int8_matmul_has_vnni() ? 255.0f : 127.0f;
  s.values = w.values.contiguous();
  s.scales = w.scales.to(at::kFloat).contiguous();
  s.column_sums = s.values.to(at::kInt).sum(1).to(at::kFloat).contiguous();  // exact: |Σ| ≤ 127·K < 2²⁴
  s.bias = bias.defined() ? bias.detach().to(at::kCPU, at::kFloat).contiguous() : at::zeros({s.n}, at::kFloat);
  s.packed = std::make_unique<onednn::PackedWeights>(memory({{s.k, s.n}, dt::s8, tag::ba}, cpu_engine(), s.values.data_ptr()));
}

Int8Matmul::~Int8Matmul() = default;

at::Tensor Int8Matmul::operator()(const at::Tensor& x, bool relu) const {
  auto& s = *state_;
  TORCH_CHECK(x.dim() == 2 && x.size(1) == s.k && x.scalar_type() == at::kFloat && x.is_contiguous(),
              "Int8Matmul: contiguous fp32 [M, K] expected");
  const int64_t rows = x.size(0), padded = row_bucket(rows);
  const auto prim = primitive_for(padded, s.k, s.n, relu);

  // The activations' range always holds 0, so that 0 (and the padding) is exact.
  auto [lo, hi] = kHasAvx512 ? range_of_avx512(x.data_ptr<float>(), x.numel()) : range_of(x.data_ptr<float>(), x.numel());
  lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
  const float scale = hi > lo ? (hi - lo) / s.qmax : 1.0f;
  const float zero = std::clamp(std::nearbyint(-lo / scale), 0.0f, s.qmax);
  auto q = at::empty({padded, s.k}, x.options().dtype(at::kByte));
  (kHasAvx512 ? quantize_avx512 : quantize)(x.data_ptr<float>(), q.data_ptr<uint8_t>(), x.numel(), 1.0f / scale, zero,
                                            s.qmax);
  if (padded > rows) std::fill_n(q.data_ptr<uint8_t>() + x.numel(), (padded - rows) * s.k, uint8_t(0));

  auto col_scale = at::empty({s.n}, x.options());
  auto col_add = at::empty({1, s.n}, x.options());
  float *cs = col_scale.data_ptr<float>(), *ca = col_add.data_ptr<float>();
  column_terms(s.scales.data_ptr<float>(), s.column_sums.data_ptr<float>(), s.bias.data_ptr<float>(), scale, zero, cs,
               ca, s.n);

  auto y = at::empty({padded, s.n}, x.options());
  const auto& eng = cpu_engine();
  onednn::run(*prim, {{DNNL_ARG_SRC, memory({{padded, s.k}, dt::u8, tag::ab}, eng, q.data_ptr())},
                      {DNNL_ARG_WEIGHTS, s.packed->in_layout(prim->weights)},
                      {DNNL_ARG_DST, memory({{padded, s.n}, dt::f32, tag::ab}, eng, y.data_ptr())},
                      {DNNL_ARG_ATTR_OUTPUT_SCALES, memory({{s.n}, dt::f32, tag::a}, eng, cs)},
                      {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, memory({{1, s.n}, dt::f32, tag::ab}, eng, ca)}});
  return padded > rows ? y.narrow(0, 0, rows) : y;
}

}  // namespace yoke

#endif
