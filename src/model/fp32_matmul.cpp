#include "model/fp32_matmul.h"

#include <stdexcept>

#include "util/error.h"

#ifndef YOKE_HAVE_ONEDNN

namespace yoke {

bool fp32_matmul_available() { return false; }
struct Fp32Matmul::State {};
Fp32Matmul::Fp32Matmul(const at::Tensor&, const at::Tensor&) {
  throw InputError("this build has no oneDNN fp32 product (it needs Debian's libdnnl-dev and Debian's LibTorch)");
}
Fp32Matmul::~Fp32Matmul() = default;
at::Tensor Fp32Matmul::operator()(const at::Tensor&, bool) const { throw std::logic_error("Fp32Matmul: not built"); }
int64_t Fp32Matmul::out_features() const { return 0; }

}  // namespace yoke

#else

#include "model/onednn_matmul.h"
#include "model/product_rows.h"

namespace yoke {

namespace {

using namespace onednn;  // memory, tag, dt, cpu_engine

// One primitive per shape, shared by every matrix of that shape: (rows, K, N, relu).
std::shared_ptr<const onednn::Matmul> primitive_for(int64_t rows, int64_t k, int64_t n, bool relu) {
  return onednn::matmul_for({dt::f32, rows, k, n, relu}, [&] {
    const memory::desc src({rows, k}, dt::f32, tag::ab), wei({k, n}, dt::f32, tag::any),
        bias({1, n}, dt::f32, tag::ab), dst({rows, n}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    if (relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // onednn::run's, per calling thread
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, wei, bias, dst), attr, cpu_engine());
  });
}

}  // namespace

bool fp32_matmul_available() { return true; }

struct Fp32Matmul::State {
  int64_t n = 0, k = 0;
  at::Tensor weight;  // fp32 [N, K], the model's own when it is contiguous: oneDNN's weights [K, N] in layout ba
  at::Tensor bias;    // fp32 [1, N], zeros without one
  std::unique_ptr<onednn::PackedWeights> packed;  // weight, in each layout a primitive asked for
};

Fp32Matmul::Fp32Matmul(const at::Tensor& weight, const at::Tensor& bias) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  TORCH_CHECK(weight.dim() == 2, "Fp32Matmul: weight [N, K] expected");
  s.n = weight.size(0);
  s.k = weight.size(1);
  s.weight = weight.detach().to(at::kCPU, at::kFloat).contiguous();  // read only: decoding does not change it
  s.bias = (bias.defined() ? bias.detach().to(at::kCPU, at::kFloat).reshape({1, s.n}).clone() : at::zeros({1, s.n}, at::kFloat))
               .contiguous();
  s.packed = std::make_unique<onednn::PackedWeights>(memory({{s.k, s.n}, dt::f32, tag::ba}, cpu_engine(), s.weight.data_ptr()));
}

Fp32Matmul::~Fp32Matmul() = default;

int64_t Fp32Matmul::out_features() const { return state_->n; }

at::Tensor Fp32Matmul::operator()(const at::Tensor& x_in, bool relu) const {
  auto& s = *state_;
  TORCH_CHECK(x_in.size(-1) == s.k && x_in.scalar_type() == at::kFloat && x_in.device().is_cpu(),
              "Fp32Matmul: fp32 [..., K] on the CPU expected");
  auto out_shape = x_in.sizes().vec();
  out_shape.back() = s.n;
  const auto x = x_in.reshape({-1, s.k}).contiguous();
  const int64_t rows = x.size(0);
  // Below 4 rows a small matrix is read faster by OpenBLAS's matrix-vector kernels than by a
  // primitive (yoke_bench_fp32_linear: 256 × 256 at one row 7 µs against 21);
  // the output matrix (N·K in the millions) is faster here at every row count.
  if (rows < 4 && s.n * s.k < (int64_t(1) << 20)) {
    auto y = at::linear(x, s.weight, s.bias.view({s.n}));
    return (relu ? y.relu_() : y).view(out_shape);
  }
  auto y = at::empty({rows, s.n}, x.options());
  const auto& eng = cpu_engine();
  const memory bias({{1, s.n}, dt::f32, tag::ab}, eng, s.bias.data_ptr());
  const float* src = x.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  int64_t done = 0;
  for (const int64_t m : product_row_chunks(rows)) {  // rows [done, done + m): views, nothing copied
    const auto prim = primitive_for(m, s.k, s.n, relu);
    onednn::run(*prim, {{DNNL_ARG_SRC, memory({{m, s.k}, dt::f32, tag::ab}, eng, const_cast<float*>(src + done * s.k))},
                        {DNNL_ARG_WEIGHTS, s.packed->in_layout(prim->weights)},
                        {DNNL_ARG_BIAS, bias},
                        {DNNL_ARG_DST, memory({{m, s.n}, dt::f32, tag::ab}, eng, dst + done * s.n)}});
    done += m;
  }
  return y.view(out_shape);
}

}  // namespace yoke

#endif
