// The verdicts of a registered decision (report/registration.h): each registered comparison on the
// registered test set, tested with the registered pairing at one simultaneous level (Bonferroni over
// the registered comparisons), read by its margin rule (report/verdict.h, judge_registered), and the
// other pairing beside it as a sensitivity line that is never the verdict.
#pragma once
#include <nlohmann/json.hpp>

#include "report/report.h"

namespace yoke {

// null without a registration; else
//   {registration (as registered), recorded, test, metric, level, seeds_planned,
//    comparisons: [{a, b, claim, seed, margin, delta, se, df, p_value, p_adjusted,
//                   interval: {low, high, level}, seeds_a, seeds_b, converged, interim,
//                   detectable, verdict: {verdict, why, decided},
//                   sensitivity: {pairing, seeds_a, seeds_b, delta, interval, reading, why} or {pairing, why}}]}
// A comparison is "interim" (and its verdict says so) until every registered run of both sides has
// finished; it is inconclusive when a side has one run or a run has not converged (the reading its
// interval would give is said), and an inconclusive verdict names the smallest effect the test could
// find (80% power at its level).
nlohmann::json registered_decision(const ReportInput& in);

}  // namespace yoke
