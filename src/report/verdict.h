// What a comparison of a variant with its baseline says about a claim, by the rule that
// docs/results/README.md states and the claims index follows:
//   reproduced       the seed's direction, the interval excludes 0, and every run of both variants
//                    converged;
//   contradicted     the interval lies on the other side of 0 from the seed's effect (every run
//                    converged): an effect of the opposite sign. An interval that holds 0 and
//                    excludes the seed's effect shows a smaller effect, not a contradiction: that
//                    needs a margin fixed before the runs (a registered claim, judge_registered);
// "The interval" is the simultaneous one: level 1 − alpha / comparisons (Bonferroni over the
// comparisons of one table; alpha is 0.05, or less under seeds = auto). Every claim of every
// comparison is read from it: all the intervals cover their true Δ with probability ≥ 1 − alpha,
// and then no claim read from them is false, so one adjustment holds the error of every claim
// (docs/statistics.md).
//   inconclusive     the interval holds both 0 and the seed's effect, or the runs had not
//                    converged, or there is one seed a side (no seed variance to test with).
// Without an expected effect the first two read "better" / "worse" (by the metric's direction).
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report/registration.h"

namespace yoke {

struct VerdictInput {
  double delta = 0, p_value = 1;         // p: two-sided, of Δ = 0, unadjusted
  double se = 0, df = 0;                 // of the test
  double alpha = 0.05;                   // the family's level (smaller when seeds were added sequentially)
  int comparisons = 1;                   // in the family: the interval's level is 1 − alpha / comparisons
  bool testable = false;                // ≥ 2 seeds a side
  std::optional<double> expected;       // the seed's effect on this metric, same sign convention as Δ
  bool converged = false;               // every run of both variants
  bool lower_is_better = false;         // perplexity: a negative Δ is an improvement
  double detectable = 0;                // smallest effect found with 80% power now
  std::optional<int> seeds_needed;      // for the expected effect (or the observed Δ without one)
};

struct Verdict {
  std::string verdict;  // reproduced | contradicted | better | worse | inconclusive
  std::string why;      // one sentence for the tables
};

Verdict decide(const VerdictInput& in);

// Whether the comparison is decided in the sense of seeds = auto: the simultaneous interval excludes
// 0 (a reproduction or a contradiction, or better / worse), and every run converged.
bool decided(const VerdictInput& in);

// The simultaneous interval the verdict reads, and p adjusted to the family (min(1, m · p)).
struct VerdictInterval {
  double low = 0, high = 0, level = 0.95, p_adjusted = 1;
};
VerdictInterval verdict_interval(const VerdictInput& in);

// A simultaneous interval at `level` (its coverage: 1 − alpha / comparisons), as a report holds it;
// report.json writes it {low, high, level}.
struct DecisionInterval {
  double low = 0, high = 0, level = 0;
};
nlohmann::json to_json(const DecisionInterval& i);
// Reads it back: each of the three keys must be there; null (a NaN written) reads as NaN, another
// type is an InputError naming `where`.
DecisionInterval interval_from_json(const nlohmann::json& j, const std::string& where);

// A registered claim (report/registration.h) read from its simultaneous interval [low, high] of
// Δ = B − A, by the margin rule fixed with it. In the claim's direction (quality terms, so for
// perplexity a lower B is "better"), with margin m:
//   better / worse   reproduced: the interval excludes 0 on the claim's side; contradicted
//                    otherwise when it excludes every effect of the claim's direction as large as
//                    m (all of it below m on the claim's side: the opposite direction, or too small)
//   not worse        reproduced: B is not worse by m or more (the whole interval above −m);
//                    contradicted: B is worse by more than m (the whole interval below −m)
//   equivalent       reproduced: the whole interval within (−m, +m); contradicted: all of it beyond
// and inconclusive otherwise. Whether the runs may be read at all (converged, enough seeds, the
// registered runs all finished) is the caller's: this reads the interval only.
Verdict judge_registered(const RegisteredComparison& claim, double low, double high, bool lower_is_better);

}  // namespace yoke
