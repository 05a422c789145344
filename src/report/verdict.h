// What a comparison of a variant with its baseline says about a claim, by the rule that
// docs/results/README.md states and the claims index follows:
//   reproduced       the seed's direction, the interval excludes 0 (Holm-adjusted p < 0.05), and
//                    every run of both variants converged;
//   contradicted     the interval excludes the seed's effect (every run converged);
//   inconclusive     the interval holds both 0 and the seed's effect, or the runs had not
//                    converged, or there is one seed a side (no seed variance to test with).
// Without an expected effect the first two read "better" / "worse" (by the metric's direction).
#pragma once
#include <optional>
#include <string>

namespace yoke {

struct VerdictInput {
  double delta = 0, ci_low = 0, ci_high = 0, p_holm = 1;
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

}  // namespace yoke
