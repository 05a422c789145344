#include "analysis/pca.h"

#include <algorithm>

#include "util/error.h"

namespace yoke {

Pca2d pca_2d(const std::vector<at::Tensor>& parts) {
  at::NoGradGuard no_grad;
  if (parts.empty()) throw InputError("pca_2d: no matrices given");
  std::vector<at::Tensor> rows;
  for (const auto& p : parts) rows.push_back(p.detach().to(at::kCPU, at::kDouble).reshape({p.size(0), -1}));
  auto all = at::cat(rows);
  const int64_t d = all.size(1);

  Pca2d out;
  out.mean = all.mean(0);
  auto centred = all - out.mean;
  // Rows of Vh are the principal directions; at::linalg_svd has this signature in 1.13 and 2.x.
  auto svd = at::linalg_svd(centred, /*full_matrices=*/false);
  auto s = std::get<1>(svd), vh = std::get<2>(svd);
  const int64_t k = std::min<int64_t>(2, vh.size(0));
  out.axes = at::zeros({2, d}, at::kDouble);
  out.axes.slice(0, 0, k).copy_(vh.slice(0, 0, k));
  for (int64_t i = 0; i < k; ++i) {
    auto axis = out.axes[i];
    if (axis[axis.abs().argmax()].item<double>() < 0) axis.neg_();
  }
  const double total = s.square().sum().item<double>();
  for (int64_t i = 0; i < k; ++i) out.explained[i] = total > 0 ? s[i].square().item<double>() / total : 0.0;
  // A missing axis is all zeros, so its coordinate is 0.
  for (const auto& r : rows) out.projected.push_back(at::matmul(r - out.mean, out.axes.t()));
  return out;
}

}  // namespace yoke
