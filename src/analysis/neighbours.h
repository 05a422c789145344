// Nearest words by cosine: which rows of a word matrix point the same way as a given vector
// (Liu et al. 2019, §4: a source word's nearest target words after shared-private training).
#pragma once
#include <utility>
#include <vector>

#include "compat/torch.h"

namespace yoke {

// The k rows of `matrix` [V, d] with the highest cosine to `query` [d], best first, as
// (row, cosine). Zero rows (padding) score 0 rather than NaN.
std::vector<std::pair<int64_t, double>> nearest_by_cosine(const at::Tensor& query, const at::Tensor& matrix, int64_t k);

}  // namespace yoke
