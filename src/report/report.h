// The report of an experiment: a grid of finished runs (variants × seeds) summarised per variant
// (mean ± std over seeds, difference to the baseline, paired-bootstrap p-value), written as
// JSON, Markdown, CSV and a self-contained HTML page.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace yoke {

struct RunResult {
  std::string variant;
  int seed = 0;
  // Free-form numbers: params, emb, red (a fraction, 0.667 = 66.7%), tokens_per_s, wall_s, and
  // per test set tests.<name>.bleu / chrf, or for language models tests.<name>.ppl. Nested
  // objects ({"tests": {"<name>": {"bleu": ...}}}) or flat dotted keys ("tests.<name>.bleu").
  nlohmann::json metrics;
  std::map<std::string, std::string> hyp_files;  // test name -> hypothesis path (for bootstrap)
};

struct ReportInput {
  std::string title;
  std::string baseline;                   // variant name
  std::vector<std::string> variant_order; // empty: order of first appearance in runs
  std::vector<RunResult> runs;
  std::map<std::string, std::string> ref_files;  // test name -> reference path
  std::vector<std::string> test_names;           // empty: every test found in the metrics
  std::string metric = "bleu";                   // or "ppl" for LMs, lower is better
  std::vector<std::pair<std::string, std::string>> pictures;  // caption, relative path (HTML)
};

// A JSON array, one entry per variant (variant_order first, then any other variant in order of
// appearance; variants without runs are left out):
//   {variant, baseline: bool, seeds: N, seed_list: [...], params, emb, red, tokens_per_s,
//    wall_s (means; null when no run has them),
//    tests: {<name>: {<metric>: {mean, std, values: [...]}, ...,      (bleu, chrf, ppl, ...)
//                     delta_<metric>: mean − baseline mean (0 for the baseline; null without one),
//                     p_value, p_seed, p_samples}}}
// std has the N−1 denominator (0 for one seed). For metric "bleu" the p-value comes from
// paired_bootstrap_bleu(baseline, variant) on the hypothesis files of the smallest seed that
// both have, i.e. the probability that the variant is not better than the baseline; it is null
// for the baseline itself, for "ppl", and when files are missing. Unreadable hypothesis or
// reference files, or files of different lengths, are an InputError.
nlohmann::json build_report(const ReportInput& input, int bootstrap_samples = 1000);

// How a metric key is written for people: "bleu" -> "BLEU", "chrf_pp" -> "chrF++", "ppl" -> "PPL".
std::string metric_name(const std::string& key);

// A Markdown table in the style of Liu et al. (2019)'s tables, with a title and a legend line.
std::string report_markdown(const nlohmann::json& report, const ReportInput& input);

// One row per variant with plain numbers (separate mean and std columns), RFC 4180.
std::string report_csv(const nlohmann::json& report, const ReportInput& input);

// A single self-contained page (inline CSS, no scripts, no external resources): title, table
// with the best value of each column in bold, the pictures with captions, generation time.
std::string report_html(const nlohmann::json& report, const ReportInput& input,
                        const std::string& markdown_table_unused = "");

// report.json, report.md, report.csv and report.html in out_dir (created when missing), each
// written atomically.
void write_report(const std::string& out_dir, const ReportInput& input);

}  // namespace yoke
