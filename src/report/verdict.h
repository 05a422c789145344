// What a comparison of a variant with its baseline says about a claim, by the rule that
// docs/results/README.md states and the claims index follows:
//   reproduced       the seed's direction, the interval excludes 0 (Holm-adjusted p < alpha), and
//                    every run of both variants converged;
//   contradicted     the interval excludes the seed's effect (every run converged);
// ("the interval" at level 1 − alpha: 95% for a fixed set of seeds, wider under seeds = auto)
//   inconclusive     the interval holds both 0 and the seed's effect, or the runs had not
//                    converged, or there is one seed a side (no seed variance to test with).
// Without an expected effect the first two read "better" / "worse" (by the metric's direction).
#pragma once
#include <optional>
#include <string>

namespace yoke {

struct VerdictInput {
  double delta = 0, p_holm = 1;
  double se = 0, df = 0;                // of the test, for "excludes the seed's effect" at level alpha
  double alpha = 0.05;                  // the level (smaller when seeds were added sequentially)
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

// Whether the comparison is decided in the sense of seeds = auto: the interval at level alpha
// excludes 0 (Holm-adjusted) or excludes the expected effect. Convergence is not asked here.
bool decided(const VerdictInput& in);

}  // namespace yoke
