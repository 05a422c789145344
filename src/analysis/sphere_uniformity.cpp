#include "analysis/sphere_uniformity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "embed/estimator.h"
#include "util/portable_random.h"

namespace yoke {

at::Tensor unit_rows(const at::Tensor& rows) {
  at::NoGradGuard no_grad;
  auto x = rows.detach().to(at::kCPU, at::kDouble);
  auto norms = x.norm(2, {1}, true);
  return at::where(norms.gt(kNormFloor), x / norms.clamp_min(kNormFloor), at::zeros_like(x));
}

std::pair<at::Tensor, at::Tensor> distinct_pairs(int64_t n, int64_t max_pairs, uint64_t seed) {
  const int64_t all = n < 2 ? 0 : n * (n - 1) / 2;
  if (all <= max_pairs) {
    auto first = at::empty({all}, at::kLong), second = at::empty({all}, at::kLong);
    int64_t* a = first.data_ptr<int64_t>();
    int64_t* b = second.data_ptr<int64_t>();
    for (int64_t i = 0, k = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j, ++k) a[k] = i, b[k] = j;
    return {first, second};
  }
  std::mt19937_64 rng(seed);
  auto first = at::empty({max_pairs}, at::kLong), second = at::empty({max_pairs}, at::kLong);
  int64_t* a = first.data_ptr<int64_t>();
  int64_t* b = second.data_ptr<int64_t>();
  for (int64_t k = 0; k < max_pairs; ++k) {
    const int64_t i = int64_t(uniform_below(rng, uint64_t(n)));
    int64_t j = int64_t(uniform_below(rng, uint64_t(n - 1)));
    if (j >= i) ++j;  // uniform over the n − 1 others
    a[k] = i, b[k] = j;
  }
  return {first, second};
}

std::vector<double> pair_cosines(const at::Tensor& unit, const at::Tensor& first, const at::Tensor& second) {
  at::NoGradGuard no_grad;
  const int64_t count = first.numel();
  std::vector<double> out(static_cast<size_t>(count));
  // 8192 pairs of two d-rows in double: 2 · 8192 · 8 · d bytes, 32 MB at d = 256.
  constexpr int64_t chunk = 8192;
  for (int64_t start = 0; start < count; start += chunk) {
    const int64_t end = std::min(count, start + chunk);
    auto c = (unit.index_select(0, first.slice(0, start, end)) * unit.index_select(0, second.slice(0, start, end)))
                 .sum(1)
                 .contiguous();
    std::copy(c.data_ptr<double>(), c.data_ptr<double>() + (end - start), out.begin() + start);
  }
  return out;
}

SphereStats sphere_uniformity(const at::Tensor& rows, int64_t max_pairs, uint64_t seed) {
  at::NoGradGuard no_grad;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SphereStats s;
  auto all = unit_rows(rows);
  auto keep = at::nonzero(all.norm(2, {1}).gt(0.5)).squeeze(1);  // unit rows have norm 1, the rest 0
  auto unit = all.index_select(0, keep);
  s.rows = unit.size(0);
  s.zero_rows = all.size(0) - s.rows;
  s.dim = all.size(1);
  const double n = double(s.rows), d = double(s.dim);
  s.mean_resultant_length_uniform = s.rows > 0 ? 1.0 / std::sqrt(n) : nan;
  s.cosine_mean_uniform = 0.0;
  s.cosine_std_uniform = s.dim > 0 ? 1.0 / std::sqrt(d) : nan;
  s.top_pc_share_uniform = s.rows > 0 && s.dim > 0 ? std::pow(1.0 + std::sqrt(d / n), 2) / d : nan;
  s.participation_ratio_uniform = s.rows > 0 ? d / (1.0 + (d - 1.0) / n) : nan;
  if (s.rows == 0) {
    s.mean_resultant_length = s.cosine_mean = s.cosine_std = s.top_pc_share = s.participation_ratio = nan;
    return s;
  }

  const auto mean = unit.mean(0);
  s.mean_resultant_length = mean.norm().item<double>();

  const auto [first, second] = distinct_pairs(s.rows, max_pairs, seed);
  s.pairs = first.numel();
  s.all_pairs = s.pairs == s.rows * (s.rows - 1) / 2;
  const std::vector<double> cos = pair_cosines(unit, first, second);
  if (cos.empty()) {
    s.cosine_mean = s.cosine_std = nan;
  } else {
    double sum = 0, sq = 0;
    for (double c : cos) sum += c;
    s.cosine_mean = sum / double(cos.size());
    for (double c : cos) sq += (c - s.cosine_mean) * (c - s.cosine_mean);
    s.cosine_std = std::sqrt(sq / double(cos.size()));
  }

  // Covariance of the centred unit rows (divided by n); its trace is 1 − R².
  const auto centred = unit - mean;
  const auto cov = at::matmul(centred.t(), centred) / n;
  const auto eig = at::linalg_eigvalsh(cov).clamp_min(0.0);  // ascending; rounding may give −1e-17
  const double total = eig.sum().item<double>(), squares = eig.pow(2).sum().item<double>();
  if (total > 0) {
    s.top_pc_share = eig[-1].item<double>() / total;
    s.participation_ratio = total * total / squares;
  } else {  // one row, or every row the same direction: no spread at all
    s.top_pc_share = s.participation_ratio = nan;
  }
  return s;
}

}  // namespace yoke
