#include "analysis/norm_prediction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "analysis/properties.h"

namespace yoke {
namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = 0.5 * double(i + j);  // ties share the mean of their ranks
    for (size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = double(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  if (saa == 0 || sbb == 0) return std::numeric_limits<double>::quiet_NaN();
  return sab / std::sqrt(saa * sbb);
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("spearman: the two samples differ in length");
  if (a.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  return pearson(ranks(a), ranks(b));
}

NormPrediction norm_vs_prediction(const std::vector<double>& row_norms, const std::vector<int64_t>& hyp_counts,
                                  const std::vector<int64_t>& ref_counts) {
  if (hyp_counts.size() != row_norms.size() || ref_counts.size() != row_norms.size())
    throw std::invalid_argument("norm_vs_prediction: one count per row needed");
  std::vector<double> norms, over, ref, hyp;
  for (size_t i = size_t(kFirstWordId); i < row_norms.size(); ++i) {
    if (hyp_counts[i] == 0 && ref_counts[i] == 0) continue;
    norms.push_back(row_norms[i]);
    over.push_back(std::log((double(hyp_counts[i]) + 1) / (double(ref_counts[i]) + 1)));
    ref.push_back(double(ref_counts[i]));
    hyp.push_back(double(hyp_counts[i]));
  }
  NormPrediction p;
  p.words = int64_t(norms.size());
  p.spearman_overprediction = spearman(norms, over);
  p.spearman_reference_frequency = spearman(norms, ref);
  p.spearman_hypothesis_frequency = spearman(norms, hyp);
  return p;
}

std::vector<int64_t> subword_counts(const Vocab& vocab, const std::vector<std::string>& lines) {
  std::vector<int64_t> counts(size_t(vocab.size()), 0);
  for (const auto& line : lines)
    for (int id : vocab.encode(line))
      if (id >= 0 && size_t(id) < counts.size()) ++counts[size_t(id)];
  return counts;
}

}  // namespace yoke
