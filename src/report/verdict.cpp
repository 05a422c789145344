#include "report/verdict.h"

#include <algorithm>
#include <cmath>

#include "eval/significance.h"
#include "report/signed_number.h"
#include "util/error.h"
#include "util/json_file.h"

namespace yoke {

namespace {

std::string need_text(const VerdictInput& in, double effect) {
  std::string s = "the smallest effect this test finds with 80% power is " + signed_number(in.detectable).substr(1);
  if (in.seeds_needed)
    s += "; " + std::to_string(*in.seeds_needed) + " seeds a variant would find " + signed_number(effect);
  else
    s += "; no number of seeds up to 50 would find " + signed_number(effect) + " on this test set";
  return s;
}

double level(const VerdictInput& in) { return in.alpha / double(std::max(1, in.comparisons)); }

// Whether the simultaneous interval excludes the value x: the t test of Δ = x at its level.
bool excludes(const VerdictInput& in, double x) {
  if (in.se <= 0) return in.delta != x;
  return t_two_sided_p((in.delta - x) / in.se, in.df) < level(in);
}

bool excludes_expected(const VerdictInput& in) { return in.expected && excludes(in, *in.expected); }

}  // namespace

VerdictInterval verdict_interval(const VerdictInput& in) {
  VerdictInterval v;
  v.level = 1.0 - level(in);
  v.p_adjusted = std::min(1.0, in.p_value * double(std::max(1, in.comparisons)));
  const double q = in.se > 0 ? t_quantile(1.0 - level(in) / 2, in.df) : 0.0;
  v.low = in.delta - q * in.se;
  v.high = in.delta + q * in.se;
  return v;
}

bool decided(const VerdictInput& in) { return in.testable && in.converged && excludes(in, 0.0); }

Verdict decide(const VerdictInput& in) {
  if (!in.testable) return {"inconclusive", "one seed on a side: no seed variance to test with"};
  const bool excludes_0 = excludes(in, 0.0);
  const bool improves = in.lower_is_better ? in.delta < 0 : in.delta > 0;
  if (in.expected) {
    const double e = *in.expected;
    const bool excludes_e = excludes_expected(in);
    const bool same_sign = (e > 0) == (in.delta > 0);
    if (!in.converged && (excludes_0 || excludes_e))
      return {"inconclusive", std::string(excludes_0 ? "the interval excludes 0" : "the interval excludes the seed's " + signed_number(e)) +
                                  ", but not every run converged"};
    if (excludes_0 && same_sign && !excludes_e) return {"reproduced", "the interval excludes 0 and holds the seed's " + signed_number(e)};
    if (excludes_0 && same_sign) {
      // The interval excludes the seed's effect on one side: all of it beyond e, or all short of it.
      const bool larger = std::abs(in.delta) > std::abs(e);
      return {"reproduced", std::string("same direction, the interval excludes 0 (the effect is ") + (larger ? "larger" : "smaller") +
                                " than the seed's " + signed_number(e) + ")"};
    }
    if (excludes_0) return {"contradicted", "the interval lies on the other side of 0 from the seed's " + signed_number(e)};
    if (excludes_e)
      return {"inconclusive", "the interval holds 0 and excludes the seed's " + signed_number(e) +
                                  ": a smaller effect, which contradicts the claim only against a margin registered "
                                  "before the runs; " + need_text(in, e)};
    return {"inconclusive", "the interval holds 0 and the seed's " + signed_number(e) + "; " + need_text(in, e)};
  }
  if (excludes_0) {
    if (!in.converged) return {"inconclusive", "the interval excludes 0, but not every run converged"};
    return {improves ? "better" : "worse", "the interval excludes 0"};
  }
  return {"inconclusive", "the interval holds 0; " + need_text(in, in.delta)};
}

Verdict judge_registered(const RegisteredComparison& c, double low, double high, bool lower_is_better) {
  // Quality terms: a positive value is B better than A.
  const double qlow = lower_is_better ? -high : low, qhigh = lower_is_better ? -low : high;
  const double m = c.margin;
  const std::string margin = signed_number(m).substr(1);
  switch (c.kind) {
    case ClaimKind::better:
    case ClaimKind::worse: {
      // In the claim's direction: positive is the direction the seed reports.
      const double s = c.kind == ClaimKind::better ? 1.0 : -1.0;
      const double dlow = s > 0 ? qlow : -qhigh, dhigh = s > 0 ? qhigh : -qlow;
      const std::string seed = c.seed_effect ? " (the seed's " + signed_number(*c.seed_effect) + ")" : "";
      if (dlow > 0) {
        std::string why = "the interval excludes 0 on the seed's side" + seed;
        if (c.seed_effect) {
          const double e = std::fabs(*c.seed_effect);
          if (dlow > e) why += "; the effect is larger than the seed's";
          else if (dhigh < e) why += "; the effect is smaller than the seed's";
        }
        return {"reproduced", why};
      }
      if (dhigh < 0) return {"contradicted", "the interval lies on the other side of 0" + seed};
      if (dhigh < m)
        return {"contradicted", "the interval shows no effect of the seed's direction" + seed + " and rules out one of " +
                                    margin + " (the margin) or more"};
      return {"inconclusive", "the interval holds 0 and an effect of the seed's direction" + seed + " of the margin " +
                                  margin + " or more"};
    }
    case ClaimKind::not_worse:
      if (qlow > -m) return {"reproduced", "the interval rules out B worse than A by the margin " + margin + " or more"};
      if (qhigh < -m) return {"contradicted", "the interval lies wholly at B worse than A by more than the margin " + margin};
      return {"inconclusive", "the interval holds B worse than A by the margin " + margin + " and less"};
    case ClaimKind::equivalent:
      if (qlow > -m && qhigh < m) return {"reproduced", "the interval lies within the margin ±" + margin};
      if (qlow >= m || qhigh <= -m) return {"contradicted", "the interval lies wholly beyond the margin ±" + margin};
      return {"inconclusive", "the interval reaches across the margin ±" + margin};
  }
  return {"inconclusive", ""};
}

nlohmann::json to_json(const DecisionInterval& i) { return {{"low", i.low}, {"high", i.high}, {"level", i.level}}; }

DecisionInterval interval_from_json(const nlohmann::json& j, const std::string& where) {
  auto read = [&](const char* key) {
    if (!j.is_object() || !j.contains(key)) throw InputError(where + ": the interval has no \"" + std::string(key) + "\"");
    return optional_number(j, key, where + ".interval").value_or(NAN);
  };
  return {read("low"), read("high"), read("level")};
}

}  // namespace yoke
