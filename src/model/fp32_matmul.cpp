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

#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>
#include <utility>
#include <vector>

#include "model/int8_linear.h"  // row_bucket

namespace yoke {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// One primitive per shape, shared by every matrix of that shape: (rows, K, N, relu).
struct Primitive {
  dnnl::matmul matmul;
  memory::desc weights, scratchpad;
};
using ShapeKey = std::tuple<int64_t, int64_t, int64_t, bool>;
std::mutex primitives_mutex;
std::map<ShapeKey, std::shared_ptr<const Primitive>> primitives;

std::shared_ptr<const Primitive> primitive_for(int64_t rows, int64_t k, int64_t n, bool relu) {
  const ShapeKey key{rows, k, n, relu};
  std::lock_guard<std::mutex> lock(primitives_mutex);
  auto& p = primitives[key];
  if (p) return p;
  const memory::desc src({rows, k}, dt::f32, tag::ab), wei({k, n}, dt::f32, tag::any),
      bias({1, n}, dt::f32, tag::ab), dst({rows, n}, dt::f32, tag::ab);
  dnnl::primitive_attr attr;
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  // The caller's scratchpad: two decoding workers may run one primitive at once.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, bias, dst), attr, cpu_engine());
  auto made = std::make_shared<Primitive>();
  made->matmul = dnnl::matmul(pd);
  made->weights = pd.weights_desc();
  made->scratchpad = pd.scratchpad_desc();
  p = made;
  return p;
}

}  // namespace

bool fp32_matmul_available() { return true; }

struct Fp32Matmul::State {
  int64_t n = 0, k = 0;
  at::Tensor weight;         // fp32 [N, K], the model's own when it is contiguous: oneDNN's weights [K, N] in layout ba
  at::Tensor bias;           // fp32 [1, N], zeros without one
  std::mutex packed_mutex;   // the weights in each layout a primitive asked for, packed once
  std::vector<std::pair<memory::desc, memory>> packed;

  memory packed_for(const memory::desc& want) {
    std::lock_guard<std::mutex> lock(packed_mutex);
    for (auto& [desc, mem] : packed)
      if (desc == want) return mem;
    memory plain({{k, n}, dt::f32, tag::ba}, cpu_engine(), weight.data_ptr());
    memory mem(want, cpu_engine());
    dnnl::stream stream(cpu_engine());
    dnnl::reorder(plain, mem).execute(stream, plain, mem);
    stream.wait();
    packed.emplace_back(want, mem);
    return mem;
  }
};

Fp32Matmul::Fp32Matmul(const at::Tensor& weight, const at::Tensor& bias) : state_(std::make_unique<State>()) {
  auto& s = *state_;
  TORCH_CHECK(weight.dim() == 2, "Fp32Matmul: weight [N, K] expected");
  s.n = weight.size(0);
  s.k = weight.size(1);
  s.weight = weight.detach().to(at::kCPU, at::kFloat).contiguous();  // read only: decoding does not change it
  s.bias = (bias.defined() ? bias.detach().to(at::kCPU, at::kFloat).reshape({1, s.n}).clone() : at::zeros({1, s.n}, at::kFloat))
               .contiguous();
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
  // primitive padded to 8 rows (yoke_bench_fp32_linear: 256 × 256 at one row 7 µs against 21);
  // the output matrix (N·K in the millions) is faster here at every row count.
  if (rows < 4 && s.n * s.k < (int64_t(1) << 20)) {
    auto y = at::linear(x, s.weight, s.bias.view({s.n}));
    return (relu ? y.relu_() : y).view(out_shape);
  }
  const int64_t padded = row_bucket(rows);
  const auto prim = primitive_for(padded, s.k, s.n, relu);
  at::Tensor src_t = x;
  if (padded > rows) {  // zero rows below: their outputs are dropped
    src_t = at::empty({padded, s.k}, x.options());
    src_t.narrow(0, 0, rows).copy_(x);
    src_t.narrow(0, rows, padded - rows).zero_();
  }
  auto y = at::empty({padded, s.n}, x.options());
  const auto& eng = cpu_engine();
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < prim->scratchpad.get_size()) scratch.resize(prim->scratchpad.get_size());
  memory src({{padded, s.k}, dt::f32, tag::ab}, eng, src_t.data_ptr());
  memory dst({{padded, s.n}, dt::f32, tag::ab}, eng, y.data_ptr());
  memory bias({{1, s.n}, dt::f32, tag::ab}, eng, s.bias.data_ptr());
  memory scratch_mem(prim->scratchpad, eng, scratch.data());
  thread_local dnnl::stream stream(eng);  // one per calling thread: a stream is not shared
  prim->matmul.execute(stream, {{DNNL_ARG_SRC, src},
                                {DNNL_ARG_WEIGHTS, s.packed_for(prim->weights)},
                                {DNNL_ARG_BIAS, bias},
                                {DNNL_ARG_DST, dst},
                                {DNNL_ARG_SCRATCHPAD, scratch_mem}});
  stream.wait();
  return (padded > rows ? y.narrow(0, 0, rows) : y).view(out_shape);
}

}  // namespace yoke

#endif
