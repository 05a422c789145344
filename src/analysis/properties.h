// Measurements on the word matrices of a trained model (what `yoke analyze`
// reports): row-norm statistics (Liu, Zhai & Chen 2020, figure 2), the estimator's identity and normality
// (Liu, Zhai & Chen 2020, §2.2) and the tying gap (Press & Wolf 2017). Pure functions: no file I/O.
// The special ids (pad, unk, bos, eos = 0..3) are never words, so they are left out of every
// measurement as rows; as competitors in an argmax or max they stay in, as at decoding time.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "embed/sharing.h"

namespace yoke {

// The first id that is a word (after pad, unk, bos, eos).
constexpr int64_t kFirstWordId = 4;

// One distinct matrix of a model, named by its roles: "source", "output", or, when one matrix
// plays several, "shared (source=target=output)".
struct RoleMatrix {
  std::string name;
  const WordMatrix* matrix;
};
std::vector<RoleMatrix> distinct_matrices(const WordEmbeddings&);

// Rows kFirstWordId.. of a matrix, detached (analysis never trains).
at::Tensor word_rows(const WordMatrix&);

// ‖w_i‖ of the word rows (specials left out), as doubles on the CPU.
std::vector<double> word_row_norms(const WordMatrix&);

struct NormStats {
  double mean = 0, std = 0, min = 0, max = 0;  // std: population (divides by n)
};
NormStats norm_stats(const std::vector<double>& values);

// Fraction of word ids k for which h = w_k gives argmax_i ℓ_i = k under `estimator`.
// ℓ is computed `chunk` rows of h at a time, so memory stays at chunk × V.
double identity_fraction(Estimator estimator, const WordMatrix& output, int64_t chunk = 512);

// The largest ℓ_i over all i and over unit vectors h: w_k/‖w_k‖ for every word id k (zero rows
// skipped) plus `random_probes` uniformly random directions drawn from `seed`. Normality holds
// when this is ≤ 1.
double normality_max_logit(Estimator estimator, const WordMatrix& output, int64_t random_probes = 1000,
                           uint64_t seed = 1, int64_t chunk = 512);

// Mean over word rows j of cos(a_j, b_j) for two [V, d] matrices; a zero row counts as cosine 0.
double mean_row_cosine(const at::Tensor& a, const at::Tensor& b);

// The tying gap: mean cos(e_j, u_j) between target-embedding and output rows when they are
// different matrices (tie none or src-tgt); nullopt when they are one matrix.
std::optional<double> tying_gap(const WordEmbeddings&);

}  // namespace yoke
