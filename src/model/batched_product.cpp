#include "model/batched_product.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#ifndef YOKE_HAVE_ONEDNN

namespace yoke {

bool batched_product_fits(const at::Tensor&, const at::Tensor&) { return false; }
at::Tensor batched_product(const at::Tensor&, const at::Tensor&, const at::Tensor&) {
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

// An empty tensor of `sizes` whose dimensions lie in memory in the order of `layout`'s strides
// (largest first), its last dimension dense; plain row-major without a layout or where the order
// would not keep the last dimension innermost. A head split's product laid out as the heads'
// [B, T, H, d] source is merged back by a view, and its gradient reaches the fused projection
// without a copy.
at::Tensor empty_laid_out_as(const std::vector<int64_t>& sizes, const std::vector<int64_t>& layout,
                             const at::TensorOptions& options) {
  const int64_t dims = int64_t(sizes.size());
  if (int64_t(layout.size()) != dims) return at::empty(sizes, options);
  std::vector<int64_t> order(static_cast<size_t>(dims));
  for (int64_t d = 0; d < dims; ++d) order[size_t(d)] = d;
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return layout[size_t(x)] > layout[size_t(y)]; });
  if (order.back() != dims - 1) return at::empty(sizes, options);
  std::vector<int64_t> stored(static_cast<size_t>(dims)), back(static_cast<size_t>(dims));
  for (int64_t i = 0; i < dims; ++i) stored[size_t(i)] = sizes[size_t(order[size_t(i)])], back[size_t(order[size_t(i)])] = i;
  return at::empty(stored, options).permute(back);
}

// a · b into a new tensor laid out as a tensor of strides `layout` (when given).
at::Tensor product(const at::Tensor& a_in, const at::Tensor& b_in, const std::vector<int64_t>& layout = {}) {
  const auto a = readable(a_in), b = readable(b_in);
  auto sizes = a.sizes().vec();
  sizes.back() = b.size(-1);
  auto c = empty_laid_out_as(sizes, layout, a.options());
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

// lhs · rhs laid out as x (the input whose gradient it is): where x's rows are its dense dimension
// (a transposed head split, kᵀ), as (rhsᵀ · lhsᵀ)ᵀ, so that the product's last dimension is dense.
at::Tensor gradient_like(const at::Tensor& lhs, const at::Tensor& rhs, const at::Tensor& x) {
  if (x.stride(-1) == 1 || x.stride(-2) != 1) return product(lhs, rhs, x.strides().vec());
  return product(rhs.transpose(-2, -1), lhs.transpose(-2, -1), x.transpose(-2, -1).strides().vec()).transpose(-2, -1);
}

struct BatchedProduct : torch::autograd::Function<BatchedProduct> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b,
                            const std::vector<int64_t>& layout) {
    ctx->save_for_backward({a, b});
    return product(a, b, layout);
  }
  // d(a·b): grad · bᵀ for a, aᵀ · grad for b (transposes by strides), each laid out as its input.
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& a = saved[0];
    const auto& b = saved[1];
    const auto& g = grads[0];
    at::Tensor ga, gb;
    if (ctx->needs_input_grad(0)) ga = gradient_like(g, b.transpose(-2, -1), a);
    if (ctx->needs_input_grad(1)) gb = gradient_like(a.transpose(-2, -1), g, b);
    return {ga, gb, at::Tensor()};  // none for the layout
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

at::Tensor batched_product(const at::Tensor& a, const at::Tensor& b, const at::Tensor& layout) {
  return BatchedProduct::apply(a, b, layout.defined() ? layout.strides().vec() : std::vector<int64_t>{});
}

}  // namespace yoke

#endif
