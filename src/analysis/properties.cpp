#include "analysis/properties.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace yoke {

at::Tensor word_rows(const WordMatrix& m) {
  auto full = m.full().detach();
  return full.slice(0, std::min<int64_t>(kFirstWordId, full.size(0)));
}

namespace {

// Unit vectors drawn with the standard library, so that a seed gives the same probes under
// every LibTorch version.
at::Tensor random_unit_vectors(int64_t count, int64_t dim, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  auto out = at::empty({count, dim}, at::kDouble);
  double* p = out.data_ptr<double>();
  for (int64_t i = 0; i < count * dim; ++i) p[i] = normal(rng);
  return out / out.norm(2, {1}, true).clamp_min(kNormFloor);
}

}  // namespace

std::vector<RoleMatrix> distinct_matrices(const WordEmbeddings& emb) {
  struct Role { const char* name; const WordMatrix* m; };
  const Role roles[] = {{"source", emb.source()}, {"target", &emb.target()}, {"output", &emb.output()}};
  std::vector<RoleMatrix> out;
  std::vector<std::vector<std::string>> names;
  for (const auto& r : roles) {
    if (!r.m) continue;
    auto same = std::find_if(out.begin(), out.end(), [&](const RoleMatrix& o) { return o.matrix == r.m; });
    if (same == out.end()) {
      out.push_back({r.name, r.m});
      names.push_back({r.name});
    } else {
      names[size_t(same - out.begin())].push_back(r.name);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (names[i].size() == 1) continue;
    std::string joined;
    for (const auto& n : names[i]) joined += (joined.empty() ? "" : "=") + n;
    out[i].name = "shared (" + joined + ")";
  }
  return out;
}

std::vector<double> word_row_norms(const WordMatrix& m) {
  at::NoGradGuard no_grad;
  auto norms = word_rows(m).to(at::kCPU, at::kDouble).norm(2, {1}).contiguous();
  return std::vector<double>(norms.data_ptr<double>(), norms.data_ptr<double>() + norms.numel());
}

NormStats norm_stats(const std::vector<double>& v) {
  NormStats s;
  if (v.empty()) return s;
  double sum = 0, sq = 0;
  s.min = s.max = v[0];
  for (double x : v) {
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean = sum / double(v.size());
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(sq / double(v.size()));
  return s;
}

double identity_fraction(Estimator estimator, const WordMatrix& output, int64_t chunk) {
  at::NoGradGuard no_grad;
  const auto rows = word_rows(output);
  const int64_t n = rows.size(0);
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  int64_t hits = 0;
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t end = std::min(n, start + chunk);
    auto best = estimate_logits(estimator, output, rows.slice(0, start, end)).argmax(1);
    auto want = at::arange(kFirstWordId + start, kFirstWordId + end, best.options());
    hits += best.eq(want).sum().item<int64_t>();
  }
  return double(hits) / double(n);
}

double normality_max_logit(Estimator estimator, const WordMatrix& output, int64_t random_probes, uint64_t seed,
                           int64_t chunk) {
  at::NoGradGuard no_grad;
  const auto rows = word_rows(output);
  auto nonzero = at::nonzero(rows.norm(2, {1}).gt(kNormFloor)).squeeze(1);
  auto own = rows.index_select(0, nonzero);
  own = own / own.norm(2, {1}, true);
  auto probes = at::cat({own, random_unit_vectors(random_probes, output.dim(), seed).to(rows.options())});
  double best = -std::numeric_limits<double>::infinity();
  for (int64_t start = 0; start < probes.size(0); start += chunk) {
    auto h = probes.slice(0, start, std::min(probes.size(0), start + chunk));
    best = std::max(best, estimate_logits(estimator, output, h).max().item<double>());
  }
  return best;
}

double mean_row_cosine(const at::Tensor& a, const at::Tensor& b) {
  at::NoGradGuard no_grad;
  const int64_t first = std::min<int64_t>(kFirstWordId, a.size(0));
  auto x = a.detach().slice(0, first).to(at::kCPU, at::kDouble);
  auto y = b.detach().slice(0, first).to(at::kCPU, at::kDouble);
  if (x.size(0) == 0) return std::numeric_limits<double>::quiet_NaN();
  auto cos = (x * y).sum(1) / (x.norm(2, {1}) * y.norm(2, {1})).clamp_min(1e-300);
  return cos.mean().item<double>();
}

std::optional<double> tying_gap(const WordEmbeddings& emb) {
  if (&emb.target() == &emb.output()) return std::nullopt;
  return mean_row_cosine(emb.target().full(), emb.output().full());
}

}  // namespace yoke
