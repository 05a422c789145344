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

#include <algorithm>
#include <cmath>

#include "model/int8_quantize.h"
#include "model/onednn_matmul.h"

namespace yoke {

namespace {

using namespace onednn;  // memory, tag, dt, cpu_engine

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
  auto [lo, hi] = int8::range_of(x.data_ptr<float>(), x.numel());
  lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
  const float scale = hi > lo ? (hi - lo) / s.qmax : 1.0f;
  const float zero = std::clamp(std::nearbyint(-lo / scale), 0.0f, s.qmax);
  auto q = at::empty({padded, s.k}, x.options().dtype(at::kByte));
  int8::quantize(x.data_ptr<float>(), q.data_ptr<uint8_t>(), x.numel(), 1.0f / scale, zero, s.qmax);
  if (padded > rows) std::fill_n(q.data_ptr<uint8_t>() + x.numel(), (padded - rows) * s.k, uint8_t(0));

  auto col_scale = at::empty({s.n}, x.options());
  auto col_add = at::empty({1, s.n}, x.options());
  float *cs = col_scale.data_ptr<float>(), *ca = col_add.data_ptr<float>();
  int8::column_terms(s.scales.data_ptr<float>(), s.column_sums.data_ptr<float>(), s.bias.data_ptr<float>(), scale, zero,
                     cs, ca, s.n);

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
