// One variant of an experiment's report (report.json's "variants"): its seeds and runs, the means
// of their whole-run numbers, and per test set its scores, its difference to the baseline, the test
// of that difference and the verdict. build_report (report.h) fills the fields and the tables read
// them; to_json and variants_from_json are the one place that names them in report.json, and keep
// its numbers as they have always been written (counts and integral means as integers, NaN as
// null), so that every committed report.json reads back and rebuilds byte for byte.
#pragma once
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/significance.h"
#include "report/run_result.h"
#include "report/verdict.h"

namespace yoke {

// One metric over the variant's runs that have it, by seed.
struct MetricSummary {
  double mean = NAN, std = NAN;  // std: N−1 denominator, 0 for one run
  std::vector<double> values;
};

struct SeedDelta {
  int seed = 0;
  double delta = 0;  // the variant's score minus the baseline's, same seed
};

// eval/significance.h's test of the variant against the baseline (report.json's "test": method,
// delta, paired, se, df, var_seed, var_sentence, run_var_a, run_var_b of `result`; a df that is
// infinite, a normal test, is written null).
struct ComparisonTest {
  SignificanceResult result;
  std::optional<double> detectable;  // smallest Δ found with 80% power at the verdict's level
};

// Koehn's paired bootstrap over test sentences with the seeds held fixed (BLEU only).
struct SentenceBootstrap {
  double low = 0, high = 0, p_value = 1;
  int samples = 0;
};

struct VariantVerdict {
  Verdict verdict;
  bool decided = false;  // report/verdict.h's decided()
};

// One test set of one variant. The comparison fields are none for the baseline, and without a
// baseline or a second seed; the last three are none until the verdicts are read.
struct VariantTest {
  std::map<std::string, MetricSummary> metrics;  // bleu, chrf, chrf_pp, ppl, ppl_word, ...
  std::optional<double> delta;                   // mean − baseline mean of the report's metric (0: baseline)
  std::vector<SeedDelta> delta_per_seed;         // each seed both have
  std::optional<double> p_value;                 // two-sided, unadjusted
  std::optional<std::pair<double, double>> delta_ci95;
  std::optional<ComparisonTest> test;
  std::optional<std::pair<std::vector<int>, std::vector<int>>> p_seeds;  // the seeds tested: baseline's, variant's
  std::optional<SentenceBootstrap> sentence_bootstrap;
  std::optional<double> expected;  // the seed paper's effect (grid key `expect`)
  std::optional<int> seeds_needed;
  std::optional<double> p_adjusted;
  std::optional<DecisionInterval> interval;  // the simultaneous one the verdict reads
  std::optional<VariantVerdict> verdict;
};

// One run of the variant: how long it trained and whether its validation plateaued.
struct RunLine {
  int seed = 0;
  std::optional<double> updates;
  std::string stop_reason;
  std::optional<Convergence> convergence;
};

struct VariantEntry {
  std::string variant;
  bool baseline = false;
  std::vector<int> seeds;
  RunNumbers means;                // over the runs that have each number
  std::optional<bool> converged;   // every run's validation plateaued; none when no run says
  std::vector<RunLine> runs;
  std::map<std::string, VariantTest> tests;  // by test-set name

  // The entry of one test set, or an empty one.
  const VariantTest& test(const std::string& name) const;
};

// How report.json writes a score, a mean or a count: an integral value as an integer (params:
// 7580000, not 7580000.0), NaN and infinities as null, any other as it is. The CSV follows it.
nlohmann::json report_number(double v);

// report.json's "variants": [{variant, baseline, seeds: N, seed_list, params, emb, …, converged,
// runs: [{seed, updates, stop_reason, converged, why}], tests: {<name>: {<metric>: {mean, std,
// values}, …, delta_<metric>, delta_per_seed: [{seed, delta}], p_value, delta_ci95: [low, high],
// test: {method, delta, paired, se, df, var_seed, var_sentence, run_var_a, run_var_b, detectable},
// p_seeds: {baseline, variant}, sentence_bootstrap: {delta_ci95, p_value, samples}, expected,
// seeds_needed, p_adjusted, interval: {low, high, level}, verdict: {verdict, why, decided}}}}].
// `metric` names the Δ's key.
nlohmann::json to_json(const std::vector<VariantEntry>& variants, const std::string& metric);

// Reads what to_json wrote; `where` (the file) names it in the InputError a malformed entry gives.
std::vector<VariantEntry> variants_from_json(const nlohmann::json& variants, const std::string& metric,
                                             const std::string& where);

}  // namespace yoke
