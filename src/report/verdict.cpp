#include "report/verdict.h"

#include <cmath>

#include "eval/significance.h"
#include "report/signed_number.h"

namespace yoke {

namespace {

std::string num(double v) { return signed_number(v); }

std::string need_text(const VerdictInput& in, double effect) {
  std::string s = "the smallest effect this test finds with 80% power is " + num(in.detectable).substr(1);
  if (in.seeds_needed)
    s += "; " + std::to_string(*in.seeds_needed) + " seeds a variant would find " + num(effect);
  else
    s += "; no number of seeds up to 50 would find " + num(effect) + " on this test set";
  return s;
}

bool excludes_expected(const VerdictInput& in) {
  if (!in.expected) return false;
  if (in.se <= 0) return in.delta != *in.expected;
  return t_two_sided_p((in.delta - *in.expected) / in.se, in.df) < in.alpha;
}

}  // namespace

bool decided(const VerdictInput& in) { return in.testable && (in.p_holm < in.alpha || excludes_expected(in)); }

Verdict decide(const VerdictInput& in) {
  if (!in.testable) return {"inconclusive", "one seed on a side: no seed variance to test with"};
  const bool excludes_0 = in.p_holm < in.alpha;
  const bool improves = in.lower_is_better ? in.delta < 0 : in.delta > 0;
  if (in.expected) {
    const double e = *in.expected;
    const bool excludes_e = excludes_expected(in);
    const bool same_sign = (e > 0) == (in.delta > 0);
    if (!in.converged && (excludes_0 || excludes_e))
      return {"inconclusive", std::string(excludes_0 ? "the interval excludes 0" : "the interval excludes the seed's " + num(e)) +
                                  ", but not every run converged"};
    if (excludes_0 && same_sign && !excludes_e) return {"reproduced", "the interval excludes 0 and holds the seed's " + num(e)};
    if (excludes_0 && same_sign) return {"reproduced", "same direction, the interval excludes 0 (the effect is smaller than the seed's " + num(e) + ")"};
    if (excludes_e) return {"contradicted", "the interval excludes the seed's " + num(e)};
    return {"inconclusive", "the interval holds 0 and the seed's " + num(e) + "; " + need_text(in, e)};
  }
  if (excludes_0) {
    if (!in.converged) return {"inconclusive", "the interval excludes 0, but not every run converged"};
    return {improves ? "better" : "worse", "the interval excludes 0 (Holm-adjusted p below the level)"};
  }
  return {"inconclusive", "the interval holds 0; " + need_text(in, in.delta)};
}

}  // namespace yoke
