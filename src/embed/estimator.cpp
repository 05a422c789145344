#include "embed/estimator.h"

#include <tuple>

#include "util/error.h"

namespace yoke {

at::Tensor estimate_logits(Estimator e, const WordMatrix& u, const at::Tensor& h) {
  auto scores = u.project(h);  // w_i·h for every i
  switch (e) {
    case Estimator::dot:
      return scores;
    case Estimator::l2:     // (w_i/‖w_i‖)·h: dividing the scores is the same and cheaper than
    case Estimator::cosine:  // normalising U first; l2 differs from cosine only in its lookups.
      return scores / u.row_norms().clamp_min(kNormFloor);
    case Estimator::square:
      return scores / u.row_norms().square().clamp_min(kNormFloor * kNormFloor);
    case Estimator::distance:
      return scores - 0.5 * u.row_norms().square();
  }
  return scores;
}

LogitParts logit_parts(Estimator e, const WordMatrix& u, const at::Tensor& h) {
  LogitParts p;
  std::tie(p.h, p.matrix) = u.projection_operands(h);
  switch (e) {
    case Estimator::dot: break;
    case Estimator::l2:
    case Estimator::cosine: p.scale = 1.0 / u.row_norms().clamp_min(kNormFloor); break;
    case Estimator::square: p.scale = 1.0 / u.row_norms().square().clamp_min(kNormFloor * kNormFloor); break;
    case Estimator::distance: p.bias = -0.5 * u.row_norms().square(); break;
  }
  return p;
}

AffineLogits affine_logits(Estimator e, const WordMatrix& u) {
  AffineLogits a;
  a.matrix = u.full();
  switch (e) {
    case Estimator::dot: break;
    case Estimator::l2:
    case Estimator::cosine: a.matrix = a.matrix / u.row_norms().clamp_min(kNormFloor).unsqueeze(1); break;
    case Estimator::square:
      a.matrix = a.matrix / u.row_norms().square().clamp_min(kNormFloor * kNormFloor).unsqueeze(1);
      break;
    case Estimator::distance: a.bias = -0.5 * u.row_norms().square(); break;
  }
  return a;
}

at::Tensor estimator_lookup(Estimator e, const WordMatrix& m, const at::Tensor& ids) {
  auto rows = m.lookup(ids);
  if (e != Estimator::l2) return rows;
  return rows / rows.norm(2, {-1}, true).clamp_min(kNormFloor);
}

}  // namespace yoke
