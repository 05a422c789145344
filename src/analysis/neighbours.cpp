#include "analysis/neighbours.h"

#include <algorithm>

namespace yoke {

std::vector<std::pair<int64_t, double>> nearest_by_cosine(const at::Tensor& query, const at::Tensor& matrix, int64_t k) {
  at::NoGradGuard no_grad;
  auto m = matrix.to(at::kCPU, at::kDouble), q = query.to(at::kCPU, at::kDouble);
  auto cos = at::matmul(m, q) / (m.norm(2, {1}) * q.norm()).clamp_min(1e-12);
  auto top = cos.topk(std::min<int64_t>(k, cos.size(0)));
  auto vals = std::get<0>(top).contiguous(), idx = std::get<1>(top).contiguous();
  std::vector<std::pair<int64_t, double>> out;
  for (int64_t i = 0; i < vals.size(0); ++i) out.emplace_back(idx.data_ptr<int64_t>()[i], vals.data_ptr<double>()[i]);
  return out;
}

}  // namespace yoke
