// A 2-D picture of several sets of word rows in one coordinate system (Liu et al. 2019, figure 6):
// principal component analysis of their union, so that source and target rows can be compared.
#pragma once
#include <vector>

#include "compat/torch.h"

namespace yoke {

struct Pca2d {
  at::Tensor mean;                    // [d]: the centre of the union
  at::Tensor axes;                    // [2, d]: unit principal directions, largest variance first
  std::vector<at::Tensor> projected;  // one [n_i, 2] per input matrix, double, CPU
  double explained[2] = {0, 0};       // share of the total variance along each axis
};

// `parts` are [n_i, d] row matrices with the same d. Computed in double on the CPU. The sign of
// each axis is fixed (its largest component is positive), so that the picture is reproducible.
// Fewer than two directions (d = 1, or a single point) give zero coordinates for the missing axis.
Pca2d pca_2d(const std::vector<at::Tensor>& parts);

}  // namespace yoke
