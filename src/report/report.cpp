#include "report/report.h"

#include <cmath>
#include <filesystem>

#include "report/registered_report.h"
#include "report/report_statistics.h"
#include "report/report_tables.h"
#include "report/svg_chart.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json_file.h"

namespace yoke {

using namespace report_detail;
using nlohmann::json;

namespace {

// Rows holding the best value of a column (ties all count).
std::vector<bool> best_rows(const Column& c) {
  std::vector<bool> best(c.cells.size(), false);
  if (c.better == 0) return best;
  double top = NAN;
  for (const auto& cell : c.cells) {
    if (std::isnan(cell.value)) continue;
    if (std::isnan(top) || (c.better > 0 ? cell.value > top : cell.value < top)) top = cell.value;
  }
  size_t with_value = 0, at_top = 0;
  for (const auto& cell : c.cells) {
    with_value += !std::isnan(cell.value);
    at_top += cell.value == top;
  }
  // A lone value, or all equal, is not "best" of anything.
  if (with_value < 2 || at_top == with_value) return best;
  for (size_t i = 0; i < c.cells.size(); ++i) best[i] = c.cells[i].value == top;
  return best;
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

std::string html_escape(const std::string& s) { return xml_escape(s); }

std::string markdown_table(const Table& t) {
  std::string md;
  if (!t.heading.empty()) md += "## " + md_escape(t.heading) + "\n\n";
  std::string header = "|", rule = "|";
  for (const auto& c : t.columns) {
    header += " " + md_escape(c.header) + " |";
    rule += c.numeric ? " ---: |" : " :--- |";
  }
  md += header + "\n" + rule + "\n";
  const size_t rows = t.columns.empty() ? 0 : t.columns[0].cells.size();
  for (size_t r = 0; r < rows; ++r) {
    std::string row = "|";
    for (const auto& c : t.columns) row += " " + md_escape(c.cells[r].text) + " |";
    md += row + "\n";
  }
  return md + "\n" + t.legend + "\n";
}

std::string html_table(const Table& t, const std::vector<VariantEntry>& report) {
  std::string h;
  if (!t.heading.empty()) h += "<h2>" + html_escape(t.heading) + "</h2>\n";
  h += std::string("<table") + (t.heading.empty() ? " class=\"main\"" : "") + ">\n<thead><tr>";
  for (const auto& c : t.columns) {
    h += "<th>" + html_escape(c.header);
    if (!c.header_note.empty()) h += "<br><span class=\"note\">" + html_escape(c.header_note) + "</span>";
    h += "</th>";
  }
  h += "</tr></thead>\n<tbody>\n";
  std::vector<std::vector<bool>> best;
  for (const auto& c : t.columns) best.push_back(best_rows(c));
  const size_t rows = t.columns.empty() ? 0 : t.columns[0].cells.size();
  for (size_t r = 0; r < rows; ++r) {
    // Rows are variants, except in the runs table, which has one per run.
    const bool baseline = rows == report.size() && report[r].baseline;
    h += baseline ? "<tr class=\"baseline\">" : "<tr>";
    for (size_t ci = 0; ci < t.columns.size(); ++ci) {
      const Cell& cell = t.columns[ci].cells[r];
      const std::string text = html_escape(cell.text);
      // Sentences (a verdict) wrap; names and numbers stay on one line.
      h += t.columns[ci].numeric ? "<td class=\"num\">" : ci > 0 ? "<td class=\"wrap\">" : "<td>";
      h += best[ci][r] ? "<strong>" + text + "</strong>" : text;
      if (!cell.note.empty()) h += "<br><span class=\"note\">" + html_escape(cell.note) + "</span>";
      h += "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody>\n</table>\n<p class=\"legend\">" + html_escape(t.legend) + " Bold: the best value of each column.</p>\n";
}

// ------------------------------------------------------------------ CSV

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// 12 significant digits: 35.2 rather than 35.199999999999996 (report.json keeps every bit); whole
// numbers as integers, as report.json writes them.
std::string csv_number(std::optional<double> v) {
  const json j = v ? report_number(*v) : json();
  if (j.is_null()) return "";
  if (j.is_number_integer()) return j.dump();
  return printf_str("%.12g", j.get<double>());
}

std::string overrides_line(const std::vector<std::string>& overrides) {
  std::string line = "Every run with these settings in place of the grid's:";
  for (const auto& o : overrides) line += " " + o;
  return line + ".";
}

}  // namespace

std::string report_markdown(const std::vector<VariantEntry>& report, const ReportInput& in, const RegisteredDecision* decision) {
  std::string md;
  if (!in.title.empty()) md += "# " + md_escape(in.title) + "\n\n";
  if (!in.overrides.empty()) md += md_escape(overrides_line(in.overrides)) + "\n\n";
  const auto tables = report_tables(report, in, false, decision);
  for (size_t i = 0; i < tables.size(); ++i) md += (i ? "\n" : "") + markdown_table(tables[i]);
  if (!in.provenance.empty()) {
    md += "\n";
    for (const auto& line : in.provenance) md += md_escape(line) + "  \n";
  }
  return md;
}

std::string report_csv(const std::vector<VariantEntry>& report, const ReportInput& in) {
  std::vector<std::string> header;
  for (const auto& f : kRunNumberFields) header.push_back(f.key);
  header.insert(header.begin(), {"variant", "baseline", "seeds"});
  const auto tests = test_names(in);
  std::vector<std::pair<std::string, std::vector<std::string>>> test_keys;
  for (const auto& test : tests) {
    const std::vector<std::string> keys = ordered_keys(report, test, in.metric);
    for (const auto& k : keys) {
      header.push_back(test + "." + k + ".mean");
      header.push_back(test + "." + k + ".std");
    }
    for (const char* k : {".delta_", ".delta_ci95_low_", ".delta_ci95_high_"}) header.push_back(test + k + in.metric);
    header.push_back(test + ".p_value");
    test_keys.emplace_back(test, keys);
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
    out += "\r\n";  // RFC 4180 line ends
  };
  emit(header);
  for (const auto& e : report) {
    std::vector<std::string> row = {e.variant, e.baseline ? "true" : "false", csv_number(double(e.seeds.size()))};
    for (const auto& f : kRunNumberFields) row.push_back(csv_number(e.means.*f.member));
    for (const auto& [test, keys] : test_keys) {
      const VariantTest& t = e.test(test);
      for (const auto& k : keys) {
        const auto s = t.metrics.find(k);
        row.push_back(s == t.metrics.end() ? "" : csv_number(s->second.mean));
        row.push_back(s == t.metrics.end() ? "" : csv_number(s->second.std));
      }
      row.push_back(csv_number(t.delta));
      row.push_back(t.delta_ci95 ? csv_number(t.delta_ci95->first) : "");
      row.push_back(t.delta_ci95 ? csv_number(t.delta_ci95->second) : "");
      row.push_back(csv_number(t.p_value));
    }
    emit(row);
  }
  return out;
}

std::string report_html(const std::vector<VariantEntry>& report, const ReportInput& in, const RegisteredDecision* decision) {
  const std::string title = in.title.empty() ? "Experiment report" : in.title;
  // Sized so that the main table of four test sets fits a 1280-pixel-wide window
  // (tests/torch/test_report_screen, scripts/screenshot-report.sh).
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      html_escape(title) +
      "</title>\n<style>\n"
      "body{font-family:sans-serif;color:#222;max-width:1220px;margin:1.5em auto;padding:0 1em;}\n"
      "h1{font-size:1.5em;}\nh2{font-size:1.15em;margin-top:1.6em;}\n"
      "table{border-collapse:collapse;margin:1em 0;font-size:0.9em;}\n"
      "th,td{padding:0.3em 0.6em;border-bottom:1px solid #ddd;white-space:nowrap;}\n"
      "th{border-bottom:2px solid #444;text-align:center;vertical-align:bottom;}\n"
      "td.num{text-align:right;font-variant-numeric:tabular-nums;}\n"
      "td.wrap{white-space:normal;min-width:16em;}\n"
      ".note{font-size:0.8em;color:#555;font-weight:normal;}\n"
      "tr.baseline td{background:#f2f5fa;}\n"
      "p.legend{font-size:0.85em;color:#555;max-width:60em;}\n"
      "figure{margin:1.5em 0;}\n"
      "figure img{max-width:100%;height:auto;border:1px solid #eee;}\n"
      "figcaption{font-size:0.9em;color:#444;margin-top:0.3em;}\n"
      "footer{margin-top:2em;font-size:0.8em;color:#777;border-top:1px solid #ddd;padding-top:0.5em;}\n"
      "</style>\n</head>\n<body>\n<h1>" +
      html_escape(title) + "</h1>\n";
  if (!in.overrides.empty()) h += "<p class=\"legend\">" + html_escape(overrides_line(in.overrides)) + "</p>\n";
  for (const auto& t : report_tables(report, in, true, decision)) h += html_table(t, report);
  for (const auto& [caption, path] : in.pictures) {
    h += "<figure>\n<img src=\"" + html_escape(path) + "\" alt=\"" + html_escape(caption) +
         "\">\n<figcaption>" + html_escape(caption) + "</figcaption>\n</figure>\n";
  }
  h += "<footer>";
  for (const auto& line : in.provenance) h += html_escape(line) + "<br>\n";
  h += "Generated by yoke from the files of this folder (yoke report DIR rebuilds it).</footer>\n</body>\n</html>\n";
  return h;
}

void write_report(const std::string& out_dir, const ReportInput& in) {
  const std::string dir = out_dir.empty() ? "." : out_dir;
  std::error_code ec;
  // libstdc++ reports "File exists" for an existing directory named with a trailing "/".
  std::filesystem::create_directories(dir, ec);
  if (ec && !std::filesystem::is_directory(dir)) {
    throw input_error(dir, 0, "cannot create directory: " + ec.message());
  }
  const std::optional<RegisteredDecision> registered = registered_decision(in);
  const RegisteredDecision* decision = registered ? &*registered : nullptr;
  const std::vector<VariantEntry> report = build_report(in, 1000, decision);
  json wrapped = {{"title", in.title},       {"overrides", in.overrides}, {"baseline", in.baseline},
                  {"metric", in.metric},     {"test_names", test_names(in)},
                  {"provenance", in.provenance}, {"expected", in.expected},
                  {"variants", to_json(report, in.metric)}};
  if (decision) wrapped["registration"] = to_json(*decision);
  write_json(dir + "/report.json", wrapped);
  write_file_atomically(dir + "/report.md", report_markdown(report, in, decision));
  write_file_atomically(dir + "/report.csv", report_csv(report, in));
  write_file_atomically(dir + "/report.html", report_html(report, in, decision));
}

}  // namespace yoke
