// What build_report (report_statistics.cpp) reads from the runs and the tables and renderers
// share with it: the test sets, the whole-run numbers, which direction of a metric is better.
#pragma once
#include <string>
#include <vector>

#include "report/report.h"

namespace yoke::report_detail {

// The numbers of a whole run (not of a test set) that the report averages over seeds.
inline constexpr const char* kRunNumbers[] = {"params",          "emb",
                                       "red",             "tokens_per_s",
                                       "wall_s",          "updates",
                                       "grad_share_output_early", "grad_share_output_late",
                                       "emb_fraction",    "emb_fraction_closed_form"};

// in.test_names, or every test set some run's metrics name.
std::vector<std::string> test_names(const ReportInput& in);

std::string join(const std::vector<std::string>& parts, const std::string& sep);

// Perplexity and loss: a lower value is the better one.
bool lower_is_better(const std::string& metric);

}  // namespace yoke::report_detail
