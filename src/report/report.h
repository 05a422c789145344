// The report of an experiment: a grid of finished runs (variants × seeds) summarised per variant
// (mean ± std over seeds, difference to the baseline, its test over seeds and sentences, a verdict), written as
// JSON, Markdown, CSV and a self-contained HTML page. Three rooms: the numbers and tests
// (build_report, report_statistics.cpp), the tables built once from them (report_tables.h), and
// the formats that render those tables (report.cpp).
#pragma once
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "report/registration.h"
#include "report/run_result.h"
#include "report/variant_report.h"

namespace yoke {

struct RegisteredDecision;  // report/registered_report.h

struct ReportInput {
  std::string title;
  // Settings that replaced the grid's for every run (`yoke experiment --set`), said under the
  // title so that a title written for other settings does not mislead.
  std::vector<std::string> overrides;
  std::string baseline;                   // variant name
  std::vector<std::string> variant_order; // empty: order of first appearance in runs
  std::vector<RunResult> runs;
  std::map<std::string, std::string> ref_files;  // test name -> reference path
  std::vector<std::string> test_names;           // empty: every test some run has
  std::string metric = "bleu";                   // or "ppl" for LMs, lower is better
  std::vector<std::pair<std::string, std::string>> pictures;  // caption, relative path (HTML)
  // variant -> the effect the seed paper reports for it, on the report's metric (grid key
  // `expect`); the report prints it beside Δ and gives a verdict against it (report/verdict.h).
  std::map<std::string, double> expected;
  // variant -> the seed paper's Params, Emb., Red. and score as it prints them (grid key `paper`),
  // and where they come from: a table puts them beside the counted ones.
  std::map<std::string, std::vector<std::string>> paper;
  std::string paper_source;
  // Said under the tables: where the runs and their files come from (experiment.json).
  std::vector<std::string> provenance;
  // The level of the verdicts: 0.05, or 0.05 / looks when seeds were added sequentially
  // (seeds = auto), so that the error rate over all the looks stays within 5%.
  double alpha = 0.05;
  // A registered decision (experiment.json's "registration"): its comparisons are read by its rule
  // (report/registered_report.h), the seeds it planned, and when and at which commit it was recorded.
  std::optional<Registration> registration;
  std::vector<int> registered_seeds;
  std::string registration_recorded;
};

// One entry per variant (report/variant_report.h; variant_order first, then any other variant in
// order of appearance; variants without runs are left out): the seeds, the means of the whole-run
// numbers over them, every run's updates and convergence, and per test set each metric's mean, std
// (N−1 denominator, 0 for one seed) and values, the Δ of the report's metric to the baseline mean,
// the Δ of each seed both have, and the comparison. p_value and delta_ci95 are the
// seeds-and-sentences test of eval/significance.h (two-sided; for BLEU from per-sentence statistics,
// stats_files or hyp_files with ref_files; perplexity from per-sentence NLL files; other metrics
// from the per-seed values alone); interval is the simultaneous one the verdict reads
// (report/verdict.h), p_adjusted p times the number of variants compared with the baseline on that
// test set (at most 1); sentence_bootstrap is Koehn's test with the seeds held fixed (BLEU only).
// They are none for the baseline and when a side has one seed. Unreadable or mismatched
// hypothesis, statistics or reference files are an InputError.
// A registered report (input.registration) passes its registered_decision() as `decision`: each
// comparison of a variant with the baseline that the registration holds then takes the registered
// verdict, interval and adjusted p on the registered test set, so that no table reads it twice.
std::vector<VariantEntry> build_report(const ReportInput& input, int bootstrap_samples = 1000,
                            const RegisteredDecision* decision = nullptr);

// How a metric key is written for people: "bleu" -> "BLEU", "chrf_pp" -> "chrF++", "ppl" -> "PPL".
std::string metric_name(const std::string& key);

// Markdown: the main table in the style of Liu et al. (2019)'s tables (the report's metric per
// test set, mean ± std, and its Δ with interval and p), then one table per test set with every
// metric and the Δ of each seed, then a training table (updates, gradient shares, embedding
// fractions) where the runs have those numbers; each with a legend line.
std::string report_markdown(const std::vector<VariantEntry>& report, const ReportInput& input,
                            const RegisteredDecision* decision = nullptr);

// One row per variant with plain numbers (separate mean and std columns), RFC 4180.
std::string report_csv(const std::vector<VariantEntry>& report, const ReportInput& input);

// A single self-contained page (inline CSS, no scripts, no external resources): title, the
// tables of report_markdown (in the main one each Δ under its score, so four test sets fit a
// 1280-pixel screen) with the best value of each column in bold, the pictures with captions,
// generation time.
std::string report_html(const std::vector<VariantEntry>& report, const ReportInput& input,
                        const RegisteredDecision* decision = nullptr);

// report.json, report.md, report.csv and report.html in out_dir (created when missing), each
// written atomically; a registered report's report.json holds its registered_decision() under
// "registration".
void write_report(const std::string& out_dir, const ReportInput& input);

}  // namespace yoke
