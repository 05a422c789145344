// What build_report (report_statistics.cpp) reads from the runs and the tables and renderers
// share with it: the test sets, the whole-run numbers, which direction of a metric is better.
#pragma once
#include <string>
#include <vector>

#include "report/report.h"

namespace yoke::report_detail {

// in.test_names, or every test set some run has.
std::vector<std::string> test_names(const ReportInput& in);

std::string join(const std::vector<std::string>& parts, const std::string& sep);

// Perplexity and loss: a lower value is the better one.
bool lower_is_better(const std::string& metric);

}  // namespace yoke::report_detail
