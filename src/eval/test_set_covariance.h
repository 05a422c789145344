// How the corpus scores of several runs on one test set move together when the test set is drawn
// again from the same distribution: the covariance matrix over test sets that a bootstrap of the
// sentences estimates, computed without random draws, so that no verdict depends on a seed.
//
// Method (docs/statistics.md, "The sentence part"). A corpus score is a smooth function of sums
// over sentences, except for BLEU's brevity penalty, which has a kink at hypothesis length =
// reference length, where real systems sit (log BP = min(0, 1 − r/h)):
//   BLEU = 100 · exp(P) · g(u),  P = ¼ Σ_n log(m_n / t_n),  u = log(h / r),  g(u) = exp(min(0, 1 − e^−u)).
// P and u of every run are smooth, so over resampled test sets they are close to jointly normal,
// with the covariances of their influence values (the delta method: Σ_i a_i b_i, where a_i is
// sentence i's first-order contribution). The kink is not linearised: Cov(BLEU_r, BLEU_s) is the
// exact expectation of the product under that normal law. exp(P) factors out in closed form
// (E[e^Z h(U)] = E[e^Z] E[h(U + Cov(U, Z))] for jointly normal Z, U), and what remains, g of a
// shifted normal pair, is integrated numerically on pieces split at the kinks (Gauss–Legendre).
// Linearising the kink instead (the plain delta method or the jackknife) sees one side of it:
// on seed001-dynamicconv-cpu300's l2 row it gave a fifth of the bootstrap's sentence part.
//
// Perplexity exp(N / D) (N: summed NLL, D: summed tokens or words, the same for every run) is
// smooth: the same normal law with no kink gives Cov = E e^Z_r · E e^Z_s · (e^{C_rs} − 1).
#pragma once
#include <vector>

#include "eval/bleu.h"

namespace yoke {

// cov[r][s] of the runs' corpus BLEU (0..100) over test sets of the same size; runs[r][i] are
// run r's statistics of sentence i, every run with the same references. Runs whose corpus has
// an n-gram order without matches (BLEU's smoothing, a score near 0) have no smooth P: their
// rows are computed with that order's precision held fixed. Throws std::invalid_argument on
// runs of different lengths or an empty test set.
std::vector<std::vector<double>> bleu_test_set_covariance(const std::vector<std::vector<BleuStats>>& runs);

// cov[r][s] of exp(Σ_i nll[r][i] / Σ_i count[i]) over test sets: perplexity from each sentence's
// summed negative log-likelihood (nats) and its token (or word) count, which every run shares.
std::vector<std::vector<double>> perplexity_test_set_covariance(const std::vector<std::vector<double>>& nll,
                                                                 const std::vector<double>& count);

// E[g(m + s·z)] and E[g(m1 + s1·z1) g(m2 + s2·z2)] for standard normals z1, z2 of correlation rho,
// g the brevity penalty's exp(min(0, 1 − e^−u)): the integrals above, open for the tests.
double expected_brevity_factor(double m, double s);
double expected_brevity_product(double m1, double s1, double m2, double s2, double rho);

}  // namespace yoke
