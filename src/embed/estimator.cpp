#include "embed/estimator.h"

#include <tuple>

#include "util/error.h"

namespace yoke {

RowTerms row_terms(Estimator e, const WordMatrix& u) {
  RowTerms t;
  switch (e) {
    case Estimator::dot: break;
    case Estimator::l2:
    case Estimator::cosine: t.divisor = u.row_norms().clamp_min(kNormFloor); break;
    case Estimator::square: t.divisor = u.row_norms().square().clamp_min(kNormFloor * kNormFloor); break;
    case Estimator::distance: t.half_square = 0.5 * u.row_norms().square(); break;
  }
  return t;
}

at::Tensor estimate_logits(Estimator e, const WordMatrix& u, const at::Tensor& h) {
  return estimate_logits(e, u, h, row_terms(e, u));
}

at::Tensor estimate_logits(Estimator e, const WordMatrix& u, const at::Tensor& h, const RowTerms& t) {
  auto scores = u.project(h);  // w_i·h for every i
  switch (e) {
    case Estimator::dot:
      return scores;
    case Estimator::l2:      // (w_i/‖w_i‖)·h: dividing the scores is the same and cheaper than
    case Estimator::cosine:  // normalising U first; l2 differs from cosine only in its lookups.
    case Estimator::square:
      return scores / t.divisor;
    case Estimator::distance:
      return scores - t.half_square;
  }
  return scores;
}

LogitParts logit_parts(Estimator e, const WordMatrix& u, const at::Tensor& h) {
  return logit_parts(e, u, h, row_terms(e, u));
}

LogitParts logit_parts(Estimator, const WordMatrix& u, const at::Tensor& h, const RowTerms& t) {
  LogitParts p;
  std::tie(p.h, p.matrix) = u.projection_operands(h);
  if (t.divisor.defined()) p.scale = 1.0 / t.divisor;    // l2, cosine, square
  if (t.half_square.defined()) p.bias = -t.half_square;  // distance: −(½x) is −½x exactly
  return p;
}

AffineLogits affine_logits(Estimator e, const WordMatrix& u) { return affine_logits(e, u, row_terms(e, u)); }

AffineLogits affine_logits(Estimator, const WordMatrix& u, const RowTerms& t) {
  AffineLogits a;
  a.matrix = u.full();
  if (t.divisor.defined()) a.matrix = a.matrix / t.divisor.unsqueeze(1);
  if (t.half_square.defined()) a.bias = -t.half_square;
  return a;
}

at::Tensor estimator_lookup(Estimator e, const WordMatrix& m, const at::Tensor& ids) {
  auto rows = m.lookup(ids);
  if (e != Estimator::l2) return rows;
  return rows / rows.norm(2, {-1}, true).clamp_min(kNormFloor);
}

}  // namespace yoke
