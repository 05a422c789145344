// How far a matrix's word rows are from seed 001's premise (§2.2.1, eq. 20): l2-normalised rows
// give an unbiased logit estimate "for w_i and w_j which are uniformly i.i.d on unit sphere".
// Measured on the unit rows ŵ_i = w_i/‖w_i‖ (rows shorter than kNormFloor are left out), each
// beside what V rows drawn uniformly and independently on the sphere S^{d-1} would give:
//   mean resultant length  R = ‖(1/V) Σ_i ŵ_i‖       uniform: E[R²] = 1/V exactly, so R ≈ 1/√V
//   pair cosines ŵ_i·ŵ_j (i ≠ j): mean and std       uniform: mean 0, variance exactly 1/d
//   top PC share  λ_1/Σλ of the covariance of the centred unit rows
//                                                     uniform: 1/d as V → ∞; for finite V the top
//                 eigenvalue of a sample covariance sits at the Marchenko–Pastur edge,
//                 (1 + √(d/V))²/d (Johnstone 2001), which is what is reported as expected
//   participation ratio (Σλ)²/Σλ², the effective dimension
//                                                     uniform: d as V → ∞; for V unit rows
//                 E[tr S²] = (d + V − 1)/(dV) with tr S = 1, so ≈ d/(1 + (d − 1)/V)
// R measures a shared direction (a cone: every row leaning one way); centring removes it, so the
// top PC share and the participation ratio measure how unevenly the rows spread around their
// mean (a few dominant axes), a different departure from uniformity.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "compat/torch.h"

namespace yoke {

struct SphereStats {
  int64_t rows = 0;       // unit rows measured (zero rows left out)
  int64_t zero_rows = 0;  // rows left out for having no direction
  int64_t dim = 0;
  double mean_resultant_length = 0, mean_resultant_length_uniform = 0;
  int64_t pairs = 0;      // distinct pairs (i, j) whose cosines were measured
  bool all_pairs = false;  // every pair, not a sample
  double cosine_mean = 0, cosine_std = 0;  // std over pairs (divides by the number of pairs)
  double cosine_mean_uniform = 0, cosine_std_uniform = 0;
  double top_pc_share = 0, top_pc_share_uniform = 0;
  double participation_ratio = 0, participation_ratio_uniform = 0;
};

// `rows`: [n, d], the word rows (specials already left out), any dtype and device. Pair cosines
// over every distinct pair when there are at most `max_pairs` of them, else over `max_pairs`
// pairs drawn (with replacement) from `seed`. Computed in double on the CPU.
SphereStats sphere_uniformity(const at::Tensor& rows, int64_t max_pairs = 200000, uint64_t seed = 1);

// Pairs (i, j), 0 ≤ i < j < n when all of them fit in `max_pairs` (in order), else `max_pairs`
// pairs with i ≠ j drawn uniformly from mt19937_64 by util/portable_random.h (the same pairs
// under every standard library and LibTorch version). Returned as two [count] int64 tensors.
std::pair<at::Tensor, at::Tensor> distinct_pairs(int64_t n, int64_t max_pairs, uint64_t seed);

// Rows divided by their norms, in double on the CPU; rows shorter than kNormFloor stay zero.
at::Tensor unit_rows(const at::Tensor& rows);

// ŵ_i·ŵ_j for the given pairs of a [n, d] matrix of unit rows, computed in chunks (memory stays
// at a few MB whatever the number of pairs).
std::vector<double> pair_cosines(const at::Tensor& unit, const at::Tensor& first, const at::Tensor& second);

}  // namespace yoke
