// The verdicts of a registered decision (report/registration.h): each registered comparison on the
// registered test set, tested with the registered pairing at one simultaneous level (Bonferroni over
// the registered comparisons), read by its margin rule (report/verdict.h, judge_registered), and the
// other pairing beside it as a sensitivity line that is never the verdict. The tables and the
// report's verdicts read the fields; to_json is the one place that names them in report.json.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report.h"
#include "report/verdict.h"

namespace yoke {

// The same test with the pairing the registration did not choose: a sensitivity line.
struct SensitivityLine {
  std::string pairing;  // "paired" or "unpaired"
  std::string why;      // the line as printed
  bool tested = false;  // false: fewer than two seeds both sides have (only pairing and why)
  std::vector<int> seeds_a, seeds_b;
  double delta = 0;
  DecisionInterval interval;
  std::string reading;  // the verdict the interval would give
};

// One registered comparison, Δ = mean B − mean A.
struct DecidedComparison {
  RegisteredComparison claim;
  std::vector<int> seeds_a, seeds_b;  // the runs tested (registered paired: the seeds both have)
  bool interim = false;     // a registered run of either side has not finished
  bool converged = false;   // every run of both sides converged
  bool tested = false;      // the fields below hold a test (both sides have two runs or more)
  double delta = 0, se = 0, df = 0, p_value = 0, p_adjusted = 0, detectable = 0;
  DecisionInterval interval;
  std::optional<SensitivityLine> sensitivity;  // none when a side has fewer than two runs
  Verdict verdict;
  bool decided = false;  // reproduced or contradicted, after every run
};

struct RegisteredDecision {
  Registration registration;  // as registered
  std::string recorded;       // when and at which commit
  std::string metric;
  double level = 0.95;        // of each comparison's interval
  std::vector<int> seeds_planned;
  std::vector<DecidedComparison> comparisons;
};

// None without a registration. A comparison is "interim" (and its verdict says so) until every
// registered run of both sides has finished; it is inconclusive when a side has one run or a run has
// not converged (the reading its interval would give is said), and an inconclusive verdict names the
// smallest effect the test could find (80% power at its level).
std::optional<RegisteredDecision> registered_decision(const ReportInput& in);

//   {registration (as registered), recorded, test, metric, level, seeds_planned,
//    comparisons: [{a, b, claim, seed, margin, delta, se, df, p_value, p_adjusted,
//                   interval: {low, high, level}, seeds_a, seeds_b, converged, interim,
//                   detectable, verdict: {verdict, why, decided},
//                   sensitivity: {pairing, seeds_a, seeds_b, delta, interval, reading, why} or {pairing, why}}]}
nlohmann::json to_json(const RegisteredDecision& d);

// Reads what to_json wrote (report.json's "registration"); `where` (the file) names it in the
// InputError a malformed one gives.
RegisteredDecision registered_decision_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace yoke
