// A decision registered before its runs: which comparisons decide which claims, on what metric and
// test set, paired or not, against what margin. A grid declares it in its [registration] section
// (configs/grids/README.md); experiment.json keeps it from the first run on, and the report reads
// every verdict of a registered grid by it (report/registered_verdict.h). docs/statistics.md,
// "Registered decisions", says why each part is fixed in advance.
//
//   [registration]
//   question = Does shared-private beat vanilla and decoder WT (seed 003 Table 2)?
//   metric = bleu                     # the report's metric: bleu, or ppl for language models
//   test = decide                     # the test set that decides; the others are reported beside
//   pairing = unpaired                # paired (seed s of A against seed s of B) or unpaired (Welch)
//   pairing_why = the systems differ in shape, so a seed number couples nothing between them
//   compare = shared-private - vanilla: better, seed +0.44, margin 0.22
//   compare = tied - untied: not worse, margin 1.0
//   seed_plan = 6 seeds a system, from the power analysis in docs/results/README.md
//   stopping = each run: early stopping on the validation loss; the verdict: once, after every run
//
// A claim is what the seed says of B against A, in quality terms (for perplexity "better" is lower):
//   better / worse   a direction; `seed` is the seed's Δ in the metric's units (its sign must agree);
//                    margin m (0 ≤ m ≤ |seed|): the smallest effect that counts, so an interval that
//                    shows no effect of the claimed direction as large as m contradicts the claim
//   not worse        non-inferiority: B is not worse than A by m or more
//   equivalent       B and A differ by less than m either way
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace yoke {

enum class ClaimKind { better, worse, not_worse, equivalent };

struct RegisteredComparison {
  std::string a, b;  // Δ = B − A
  ClaimKind kind = ClaimKind::better;
  std::optional<double> seed_effect;  // the seed's Δ in the metric's units (better / worse)
  double margin = 0;                  // in the metric's units, ≥ 0
  std::string name() const { return b + " − " + a; }
};

struct Registration {
  std::string question, metric, test;
  bool paired = false;
  std::string pairing_why, seed_plan, stopping;
  double alpha = 0.05;  // the family's level: one simultaneous (Bonferroni) interval per comparison
  std::vector<RegisteredComparison> comparisons;
  bool on() const { return !comparisons.empty(); }
};

// "B - A: better, seed +0.44, margin 0.22" (the value of a `compare` key); std::invalid_argument
// saying what is wrong. `lower_is_better`: the metric's direction, to check the seed's sign.
RegisteredComparison parse_registered_comparison(const std::string& value, bool lower_is_better);

std::string claim_kind_name(ClaimKind k);
// {a, b, claim, margin, seed}: a claim as the registration and its decision write it.
nlohmann::json comparison_json(const RegisteredComparison& c);
RegisteredComparison comparison_from_json(const nlohmann::json& c);  // std::invalid_argument when malformed
nlohmann::json registration_json(const Registration& r);
Registration registration_from_json(const nlohmann::json& j);  // std::invalid_argument when malformed

// A missing or inconsistent part of a registration (no test, a comparison naming no variant, ...):
// what is wrong, or nothing. `variants`: the grid's; `metric`: what the runs report.
std::optional<std::string> registration_problem(const Registration& r, const std::vector<std::string>& variants,
                                                const std::string& metric);

}  // namespace yoke
