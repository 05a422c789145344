// What build_report (report_statistics.cpp) reads from the runs and the tables and renderers
// share with it: the test sets, the whole-run numbers, which direction of a metric is better.
#pragma once
#include <string>
#include <vector>

#include <map>

#include "eval/significance.h"
#include "report/report.h"

namespace yoke::report_detail {

using Runs = std::vector<const RunResult*>;

// Text files read once per report (hypotheses and references).
class LineCache {
 public:
  const std::vector<std::string>& get(const std::string& path);

 private:
  std::map<std::string, std::vector<std::string>> files_;
};

// The runs of one variant, by seed; two runs with the same seed are an input error.
Runs runs_of(const ReportInput& in, const std::string& variant);

// eval/significance.h's test of B's runs against A's on one test set and the report's metric: the
// sentence part from per-sentence BLEU statistics or NLL where every run has them, else the seeds'.
SignificanceResult compare_runs(const Runs& a, const Runs& b, const std::string& test, const ReportInput& in,
                                Pairing pairing, LineCache* cache);

// How a report compares seeds: as the registration says, else by seed (paired when they agree).
Pairing registered_pairing(const ReportInput& in);

// in.test_names, or every test set some run has.
std::vector<std::string> test_names(const ReportInput& in);

std::string join(const std::vector<std::string>& parts, const std::string& sep);

// Perplexity and loss: a lower value is the better one.
bool lower_is_better(const std::string& metric);

}  // namespace yoke::report_detail
