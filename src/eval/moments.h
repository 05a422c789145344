// The mean and the sample variance of a list of numbers, summed left to right (so that reports
// rebuilt from the same numbers are byte-identical): the significance tests and the reports use these.
#pragma once
#include <cmath>
#include <vector>

namespace yoke {

// NaN for no values.
inline double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / double(v.size());
}

// With N − 1 in the denominator; 0 for fewer than two values.
inline double sample_variance(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return ss / double(v.size() - 1);
}

}  // namespace yoke
