#include "loss/fused_loss.h"

#include <algorithm>

#include "compat/torch.h"  // at::parallel_for, compiled with OpenMP
#include "loss/smoothed_loss_row.h"

namespace yoke {
namespace {

bool needs_grad(const at::Tensor& t) { return t.defined() && t.requires_grad(); }

// A tensor whose value is `value` and whose gradient with respect to each part x is
// upstream · g_x: Σ x·g_x has exactly that gradient, and subtracting its detached value leaves
// the forward value alone.
at::Tensor with_gradients(const at::Tensor& value, const std::vector<std::pair<at::Tensor, at::Tensor>>& part_grads) {
  at::Tensor surrogate;
  for (const auto& [x, g] : part_grads) {
    if (!needs_grad(x)) continue;
    auto term = (x * g).sum();
    surrogate = surrogate.defined() ? surrogate + term : term;
  }
  if (!surrogate.defined()) return value;
  return value + (surrogate - surrogate.detach());
}

// 512 rows keep a CPU's caches warm; a GPU wants few, large products (≤ 2^27 logits a chunk).
int64_t device_chunk_rows(const at::Tensor& h, int64_t vocab) {
  if (!h.is_cuda()) return 512;
  return std::max<int64_t>(512, (int64_t(1) << 27) / std::max<int64_t>(1, vocab));
}

}  // namespace

LossSums fused_output_loss(const LogitParts& p, const at::Tensor& target, double epsilon, int64_t chunk_rows) {
  const int64_t n = p.h.size(0), vocab = p.matrix.size(0);
  if (chunk_rows <= 0) chunk_rows = device_chunk_rows(p.h, vocab);
  const bool grad = at::GradMode::is_enabled() &&
                    (needs_grad(p.h) || needs_grad(p.matrix) || needs_grad(p.scale) || needs_grad(p.bias));
  // loss per row = a·nll + b·Σ_v −log p_v, with a = 1 − ε − ε', b = ε' = ε/(V−1) (loss.h).
  const double b = epsilon > 0 ? epsilon / double(vocab - 1) : 0.0;
  const double a = epsilon > 0 ? 1.0 - epsilon - b : 1.0;

  // Products run in the dtype autocast asks for (bf16 on a GPU, else fp32); the softmax, the
  // loss and every accumulated gradient stay fp32.
  const auto compute = compat::matmul_dtype(p.h);
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(p.h.device());
  at::Tensor loss_sum, nll_sum, grad_h, grad_m, grad_s, grad_c;
  {
    at::NoGradGuard no_grad;
    const auto s = p.scale.defined() ? p.scale.detach().to(at::kFloat) : at::Tensor();
    const auto c = p.bias.defined() ? p.bias.detach().to(at::kFloat) : at::Tensor();
    // The row scale goes into the matrix once (V·d work) instead of into every chunk's logits
    // (N·V work, forward and backward): ℓ = h'·(s ⊙ M)ᵀ + c.
    const auto m32 = s.defined() ? p.matrix.detach().to(at::kFloat) : at::Tensor();
    const auto h = p.h.detach().to(compute);
    const auto m = s.defined() ? (m32 * s.unsqueeze(1)).to(compute) : p.matrix.detach().to(compute);
    loss_sum = at::zeros({}, f32);
    nll_sum = at::zeros({}, f32);
    if (grad) {
      grad_h = at::empty(h.sizes(), f32);
      grad_m = at::zeros(m.sizes(), f32);  // with respect to s ⊙ M until the end
      if (c.defined()) grad_c = at::zeros_like(c);
    }
    // On the CPU each row's loss and gradient is one call of smoothed_loss_row, the row in cache.
    const bool by_rows = !h.is_cuda() && compute == at::kFloat && n > 0;
    const auto targets = by_rows ? target.to(at::kCPU, at::kLong).contiguous() : at::Tensor();
    if (by_rows)
      TORCH_CHECK(targets.min().item<int64_t>() >= 0 && targets.max().item<int64_t>() < vocab,
                  "fused_output_loss: a target outside the vocabulary of ", vocab);
    for (int64_t r0 = 0; r0 < n; r0 += chunk_rows) {
      const int64_t r1 = std::min(n, r0 + chunk_rows);
      const auto hc = h.slice(0, r0, r1);
      auto l = at::matmul(hc, m.t()).to(at::kFloat).contiguous();  // [n, V]
      if (c.defined()) l.add_(c);
      // Each row's log Σ e^ℓ and ℓ_target, and Σ ℓ over the chunk; on the CPU the row kernel also
      // writes ∂loss/∂ℓ_v = (a + bV)·p_v − b − a·[v = target] in place of ℓ.
      at::Tensor lse, target_logit, logit_sum;
      if (by_rows) {
        const int64_t rows = r1 - r0;
        auto stats = at::empty({3, rows}, f32);  // log Σ e^ℓ, ℓ_target, Σ ℓ per row
        float* st = stats.data_ptr<float>();
        float* logits = l.data_ptr<float>();
        const int64_t* t = targets.data_ptr<int64_t>() + r0;
        at::parallel_for(0, rows, 8, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const auto row = smoothed_loss_row(logits + r * vocab, vocab, t[r], float(a), float(b), grad);
            st[r] = row.log_sum_exp, st[rows + r] = row.target_logit, st[2 * rows + r] = row.logit_sum;
          }
        });
        lse = stats[0], target_logit = stats[1], logit_sum = stats[2].sum();
      } else {
        lse = at::logsumexp(l, {1});
        target_logit = l.gather(1, target.slice(0, r0, r1).unsqueeze(1)).squeeze(1);
        if (b > 0) logit_sum = l.sum();
      }
      const auto nll = lse - target_logit;
      nll_sum += nll.sum();
      loss_sum += a * nll.sum();
      if (b > 0) loss_sum += b * (double(vocab) * lse.sum() - logit_sum);
      if (!grad) continue;
      auto g = l;
      if (!by_rows) {
        g.sub_(lse.unsqueeze(1)).exp_().mul_(a + b * double(vocab));
        if (b > 0) g.sub_(b);
        g.scatter_add_(1, target.slice(0, r0, r1).unsqueeze(1), at::full({r1 - r0, 1}, -a, g.options()));
      }
      if (c.defined()) grad_c.addmv_(g.t(), at::ones({r1 - r0}, f32));  // column sums, as one BLAS gemv
      if (compute == at::kFloat) {
        grad_h.slice(0, r0, r1).copy_(at::matmul(g, m));
        grad_m.addmm_(g.t(), hc);
      } else {
        const auto gc = g.to(compute);
        grad_h.slice(0, r0, r1).copy_(at::matmul(gc, m));
        grad_m.add_(at::matmul(gc.t(), hc));
      }
    }
    if (grad && s.defined()) {
      // With G the gradient for s ⊙ M: ∂/∂s_v = G_v·M_v and ∂/∂M_v = s_v·G_v.
      grad_s = (grad_m * m32).sum(1);
      grad_m.mul_(s.unsqueeze(1));
    }
  }
  LossSums out;
  out.tokens = n;
  out.nll = nll_sum;
  out.loss = grad ? with_gradients(loss_sum, {{p.h, grad_h}, {p.matrix, grad_m}, {p.scale, grad_s}, {p.bias, grad_c}})
                  : loss_sum;
  return out;
}

}  // namespace yoke
