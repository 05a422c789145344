// The report's tables, built once from the variants' entries (report/variant_report.h) and rendered by each format
// (report.cpp: Markdown, HTML): a table is columns of cells, each cell its text, the value that
// "best" compares, and an optional second line.
#pragma once
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "report/report.h"

namespace yoke::report_detail {

struct Cell {
  std::string text = "\xE2\x80\x94";  // "—": no value
  double value = NAN;                 // what "best" compares; NaN takes no part
  std::string note;                   // a second, smaller line (HTML), or none
};

struct Column {
  std::string header;
  int better = 0;  // +1 higher is better, −1 lower is better, 0 no best
  bool numeric = true;
  std::vector<Cell> cells;
  std::string header_note;  // a second header line (HTML)
  bool any_value() const {
    return std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.text != Cell().text; });
  }
};

struct Table {
  std::string heading;  // "" for the main table
  std::vector<Column> columns;
  std::string legend;
};

// The main table, the registered decision (when `decision`, report/registered_report.h, is one),
// the seed paper's numbers, one table per test set, training, runs: those that have something to
// show. `stacked` puts each Δ under its score (HTML) instead of beside it.
std::vector<Table> report_tables(const std::vector<VariantEntry>& report, const ReportInput& in, bool stacked,
                                 const RegisteredDecision* decision = nullptr);

// The report's metric first, then the other metrics of `test` by name.
std::vector<std::string> ordered_keys(const std::vector<VariantEntry>& report, const std::string& test,
                                      const std::string& primary);

std::string printf_str(const char* format, double v);

}  // namespace yoke::report_detail
