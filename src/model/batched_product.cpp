#include "model/batched_product.h"

#include <stdexcept>

#ifndef YOKE_HAVE_ONEDNN

namespace yoke {

bool batched_product_fits(const at::Tensor&, const at::Tensor&) { return false; }
at::Tensor batched_product(const at::Tensor&, const at::Tensor&) {
  throw std::logic_error("batched_product: this build has no oneDNN");
}

}  // namespace yoke

#else

#include <torch/csrc/autograd/custom_function.h>

#include "model/onednn_matmul.h"

namespace yoke {

namespace {

using onednn::dt;
using onednn::memory;

memory::desc desc_of(const at::Tensor& t) {
  return memory::desc(memory::dims(t.sizes().begin(), t.sizes().end()), dt::f32,
                      memory::dims(t.strides().begin(), t.strides().end()));
}

// oneDNN reads a matrix through its strides when one of its two last dimensions is dense; a
// gradient may come expanded (stride 0) or otherwise strided, and is then copied.
at::Tensor readable(const at::Tensor& t) {
  const bool dense_inner = t.stride(-1) == 1 || t.stride(-2) == 1;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) == 0) return t.contiguous();
  return dense_inner ? t : t.contiguous();
}

at::Tensor product(const at::Tensor& a_in, const at::Tensor& b_in) {
  const auto a = readable(a_in), b = readable(b_in);
  auto sizes = a.sizes().vec();
  sizes.back() = b.size(-1);
  auto c = at::empty(sizes, a.options());
  // oneDNN keeps primitives in its own cache by description: a training batch's shapes repeat
  // across its layers and its backward.
  const dnnl::matmul primitive(dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(desc_of(a), desc_of(b), desc_of(c)), onednn::cpu_engine()));
  thread_local dnnl::stream stream(onednn::cpu_engine());  // a stream is not shared between threads
  const auto& engine = onednn::cpu_engine();
  primitive.execute(stream, {{DNNL_ARG_SRC, memory(desc_of(a), engine, a.data_ptr())},
                             {DNNL_ARG_WEIGHTS, memory(desc_of(b), engine, b.data_ptr())},
                             {DNNL_ARG_DST, memory(desc_of(c), engine, c.data_ptr())}});
  stream.wait();
  return c;
}

struct BatchedProduct : torch::autograd::Function<BatchedProduct> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    ctx->save_for_backward({a, b});
    return product(a, b);
  }
  // d(a·b): grad · bᵀ for a, aᵀ · grad for b (transposes by strides).
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& a = saved[0];
    const auto& b = saved[1];
    const auto& g = grads[0];
    at::Tensor ga, gb;
    if (ctx->needs_input_grad(0)) ga = product(g, b.transpose(-2, -1));
    if (ctx->needs_input_grad(1)) gb = product(a.transpose(-2, -1), g);
    return {ga, gb};
  }
};

}  // namespace

bool batched_product_fits(const at::Tensor& a, const at::Tensor& b) {
  const auto fp32_cpu = [](const at::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == at::kFloat; };
  if (!fp32_cpu(a) || !fp32_cpu(b) || a.dim() < 3 || a.dim() != b.dim() || a.size(-1) != b.size(-2)) return false;
  if (a.numel() == 0 || b.numel() == 0) return false;
  for (int64_t d = 0; d + 2 < a.dim(); ++d)
    if (a.size(d) != b.size(d)) return false;
  return true;
}

at::Tensor batched_product(const at::Tensor& a, const at::Tensor& b) { return BatchedProduct::apply(a, b); }

}  // namespace yoke

#endif
