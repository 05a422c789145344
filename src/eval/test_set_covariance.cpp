#include "eval/test_set_covariance.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace yoke {

namespace {

constexpr int kOrders = 4;
constexpr double kReach = 9.0;  // ±9 standard deviations: the normal mass left out is 2e-19

// 16-point Gauss–Legendre nodes and weights on [−1, 1], found once by Newton's method on P_16.
struct GaussLegendre {
  static constexpr int kN = 16;
  std::array<double, kN> x{}, w{};
  GaussLegendre() {
    for (int i = 0; i < kN; ++i) {
      double z = std::cos(M_PI * (i + 0.75) / (kN + 0.5)), dp = 0;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1, p1 = 0;
        for (int k = 1; k <= kN; ++k) {
          const double p2 = p1;
          p1 = p0;
          p0 = ((2.0 * k - 1) * z * p1 - (k - 1.0) * p2) / k;
        }
        dp = kN * (z * p0 - p1) / (z * z - 1);
        const double step = p0 / dp;
        z -= step;
        if (std::fabs(step) < 1e-16) break;
      }
      x[i] = z;
      w[i] = 2.0 / ((1 - z * z) * dp * dp);
    }
  }
};

const GaussLegendre& gauss_legendre() {
  static const GaussLegendre gl;
  return gl;
}

double normal_density(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); }

// ∫ φ(z) f(z) dz over [−kReach, kReach], on panels at most 1 wide that also end at every point of
// `breaks` (where f has a kink): each panel's integrand is smooth, so 16 nodes reach double precision.
template <typename F>
double normal_expectation(F f, std::vector<double> breaks) {
  std::vector<double> ends;
  for (double b = -kReach; b <= kReach; b += 1.0) ends.push_back(b);
  for (double b : breaks)
    if (std::isfinite(b) && b > -kReach && b < kReach) ends.push_back(b);
  std::sort(ends.begin(), ends.end());
  const GaussLegendre& gl = gauss_legendre();
  double sum = 0;
  for (size_t k = 1; k < ends.size(); ++k) {
    const double lo = ends[k - 1], hi = ends[k], half = 0.5 * (hi - lo), mid = 0.5 * (hi + lo);
    if (half <= 0) continue;
    for (int i = 0; i < GaussLegendre::kN; ++i) {
      const double z = mid + half * gl.x[i];
      sum += half * gl.w[i] * normal_density(z) * f(z);
    }
  }
  return sum;
}

double brevity_factor(double u) { return u >= 0 ? 1.0 : std::exp(1.0 - std::exp(-u)); }

// The smooth coordinates of one run: P, u and each sentence's first-order contribution to them.
struct Smooth {
  bool zero = false;  // BLEU is 0 on every test set near this one (no n-grams, or no output)
  double p = 0, u = 0;
  std::vector<double> dp, du;
};

Smooth smooth_of(const std::vector<BleuStats>& run) {
  BleuStats total;
  for (const auto& s : run) total += s;
  Smooth out;
  bool any_match = false;
  for (int n = 0; n < kOrders; ++n) any_match = any_match || total.matches[n] > 0;
  out.zero = !any_match || total.sys_len == 0 || total.ref_len == 0;
  for (int n = 0; n < kOrders; ++n) out.zero = out.zero || total.totals[n] == 0;
  if (out.zero) return out;
  const size_t count = run.size();
  out.dp.assign(count, 0.0);
  out.du.assign(count, 0.0);
  for (int n = 0; n < kOrders; ++n) {
    // An order without matches enters through sacreBLEU's smoothing, 1 / (2^k t): only t moves.
    const double m = double(total.matches[n]), t = double(total.totals[n]);
    out.p += 0.25 * (m > 0 ? std::log(m / t) : -std::log(t));
    for (size_t i = 0; i < count; ++i)
      out.dp[i] += 0.25 * ((m > 0 ? double(run[i].matches[n]) / m : 0.0) - double(run[i].totals[n]) / t);
  }
  const double h = double(total.sys_len), r = double(total.ref_len);
  out.u = std::log(h / r);
  for (size_t i = 0; i < count; ++i) out.du[i] = double(run[i].sys_len) / h - double(run[i].ref_len) / r;
  return out;
}

// Σ_i x_i y_i: the covariance over resampled test sets (counts multinomial, Cov(c_i, c_j) = δ_ij − 1/n)
// of two linear statistics whose contributions sum to 0, as influence values do.
double dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

void check_runs(size_t runs, size_t sentences, const std::vector<size_t>& lengths, const char* what) {
  if (runs == 0) throw std::invalid_argument(std::string(what) + ": no runs");
  if (sentences == 0) throw std::invalid_argument(std::string(what) + ": an empty test set");
  for (size_t r = 0; r < lengths.size(); ++r)
    if (lengths[r] != sentences)
      throw std::invalid_argument(std::string(what) + ": run " + std::to_string(r + 1) + " has " +
                                  std::to_string(lengths[r]) + " sentences, run 1 has " + std::to_string(sentences));
}

}  // namespace

double expected_brevity_factor(double m, double s) {
  if (s <= 0) return brevity_factor(m);
  return normal_expectation([&](double z) { return brevity_factor(m + s * z); }, {-m / s});
}

double expected_brevity_product(double m1, double s1, double m2, double s2, double rho) {
  if (s1 <= 0) return brevity_factor(m1) * expected_brevity_factor(m2, s2);
  if (s2 <= 0) return expected_brevity_factor(m1, s1) * brevity_factor(m2);
  rho = std::clamp(rho, -1.0, 1.0);
  const double rest = s2 * std::sqrt(std::max(0.0, 1.0 - rho * rho));
  // Given z1, the second is normal with mean m2 + s2·ρ·z1 and sd `rest`: its expectation is the
  // one-dimensional integral, whose kink (sharp where `rest` is small) sits at m2 + s2·ρ·z1 = 0.
  std::vector<double> breaks = {-m1 / s1};
  if (rho != 0) breaks.push_back(-m2 / (s2 * rho));
  return normal_expectation(
      [&](double z1) { return brevity_factor(m1 + s1 * z1) * expected_brevity_factor(m2 + s2 * rho * z1, rest); },
      breaks);
}

std::vector<std::vector<double>> bleu_test_set_covariance(const std::vector<std::vector<BleuStats>>& runs) {
  std::vector<size_t> lengths;
  for (const auto& r : runs) lengths.push_back(r.size());
  check_runs(runs.size(), runs.empty() ? 0 : runs.front().size(), lengths, "bleu_test_set_covariance");
  std::vector<Smooth> sm;
  for (const auto& r : runs) sm.push_back(smooth_of(r));
  const size_t k = runs.size();
  std::vector<std::vector<double>> cov(k, std::vector<double>(k, 0.0));
  for (size_t r = 0; r < k; ++r)
    for (size_t s = r; s < k; ++s) {
      if (sm[r].zero || sm[s].zero) continue;
      const Smooth &x = sm[r], &y = sm[s];
      const double vpx = dot(x.dp, x.dp), vpy = dot(y.dp, y.dp), cpp = dot(x.dp, y.dp);
      const double vux = dot(x.du, x.du), vuy = dot(y.du, y.du), cuu = dot(x.du, y.du);
      const double sux = std::sqrt(vux), suy = std::sqrt(vuy);
      // E f_r = 100 e^{P + ½Var P} · E g(u + Cov(u, P)); the product shifts each u by its
      // covariance with P_r + P_s.
      const double gx = expected_brevity_factor(x.u + dot(x.du, x.dp), sux);
      const double gy = expected_brevity_factor(y.u + dot(y.du, y.dp), suy);
      const double rho = sux > 0 && suy > 0 ? cuu / (sux * suy) : 0.0;
      const double gxy = expected_brevity_product(x.u + dot(x.du, x.dp) + dot(x.du, y.dp), sux,
                                                  y.u + dot(y.du, y.dp) + dot(y.du, x.dp), suy, rho);
      const double scale = 1e4 * std::exp(x.p + 0.5 * vpx + y.p + 0.5 * vpy);
      cov[r][s] = cov[s][r] = scale * (std::exp(cpp) * gxy - gx * gy);
    }
  return cov;
}

std::vector<std::vector<double>> perplexity_test_set_covariance(const std::vector<std::vector<double>>& nll,
                                                                 const std::vector<double>& count) {
  std::vector<size_t> lengths;
  for (const auto& r : nll) lengths.push_back(r.size());
  check_runs(nll.size(), count.size(), lengths, "perplexity_test_set_covariance");
  double d = 0;
  for (double c : count) d += c;
  if (!(d > 0)) throw std::invalid_argument("perplexity_test_set_covariance: the test set has no tokens");
  // Z_r = N_r / D; sentence i contributes (nll_ri − count_i · N_r / D) / D.
  std::vector<std::vector<double>> infl;
  std::vector<double> z;
  for (const auto& run : nll) {
    double n = 0;
    for (double x : run) n += x;
    z.push_back(n / d);
    std::vector<double> v(run.size());
    for (size_t i = 0; i < run.size(); ++i) v[i] = (run[i] - count[i] * n / d) / d;
    infl.push_back(std::move(v));
  }
  const size_t k = nll.size();
  std::vector<std::vector<double>> cov(k, std::vector<double>(k, 0.0));
  std::vector<double> var(k);
  for (size_t r = 0; r < k; ++r) var[r] = dot(infl[r], infl[r]);
  for (size_t r = 0; r < k; ++r)
    for (size_t s = r; s < k; ++s)
      cov[r][s] = cov[s][r] =
          std::exp(z[r] + 0.5 * var[r] + z[s] + 0.5 * var[s]) * std::expm1(r == s ? var[r] : dot(infl[r], infl[s]));
  return cov;
}

}  // namespace yoke
