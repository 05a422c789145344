#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "eval/bootstrap.h"
#include "report/svg_chart.h"
#include "text/corpus.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/progress.h"

namespace yoke {
namespace {

using nlohmann::json;
using Runs = std::vector<const RunResult*>;

// ------------------------------------------------------------------ reading the metrics

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// A number under a path of keys: nested objects first, then one flat dotted key.
std::optional<double> number_at(const json& m, const std::vector<std::string>& path) {
  const json* node = &m;
  for (const auto& key : path) {
    if (!node->is_object() || !node->contains(key)) {
      node = nullptr;
      break;
    }
    node = &(*node)[key];
  }
  if (node && node->is_number()) return node->get<double>();
  const std::string flat = join(path, ".");
  if (m.is_object() && m.contains(flat) && m[flat].is_number()) return m[flat].get<double>();
  return std::nullopt;
}

// Metric names of one test in one run's metrics (nested or flat).
void collect_metric_keys(const json& m, const std::string& test, std::set<std::string>* keys) {
  if (m.is_object() && m.contains("tests") && m["tests"].is_object() &&
      m["tests"].contains(test) && m["tests"][test].is_object()) {
    for (const auto& [k, v] : m["tests"][test].items()) {
      if (v.is_number()) keys->insert(k);
    }
  }
  const std::string prefix = "tests." + test + ".";
  if (!m.is_object()) return;
  for (const auto& [k, v] : m.items()) {
    if (v.is_number() && k.rfind(prefix, 0) == 0 && k.find('.', prefix.size()) == std::string::npos) {
      keys->insert(k.substr(prefix.size()));
    }
  }
}

// Test names found in the metrics, when the input names none.
std::vector<std::string> discover_tests(const ReportInput& in) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto& r : in.runs) {
    const json& m = r.metrics;
    if (!m.is_object()) continue;
    if (m.contains("tests") && m["tests"].is_object()) {
      for (const auto& [k, v] : m["tests"].items()) add(k);
    }
    for (const auto& [k, v] : m.items()) {
      const size_t last = k.rfind('.');
      if (k.rfind("tests.", 0) == 0 && last > 6 && last != std::string::npos) add(k.substr(6, last - 6));
    }
  }
  return names;
}

std::vector<std::string> test_names(const ReportInput& in) {
  return in.test_names.empty() ? discover_tests(in) : in.test_names;
}

// The metric the report is about first, then the others in name order.
std::vector<std::string> metric_keys(const Runs& runs, const std::string& test,
                                     const std::string& primary) {
  std::set<std::string> keys;
  for (const RunResult* r : runs) collect_metric_keys(r->metrics, test, &keys);
  std::vector<std::string> out;
  if (keys.count(primary)) out.push_back(primary);
  for (const auto& k : keys) {
    if (k != primary) out.push_back(k);
  }
  return out;
}

// ------------------------------------------------------------------ statistics

// Integral values stay integers in the JSON (params: 7580000, not 7580000.0); NaN becomes null.
json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / double(v.size());
}

// Sample standard deviation (N−1); 0 for a single value.
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return v.empty() ? NAN : 0.0;
  const double m = mean(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / double(v.size() - 1));
}

std::vector<double> values_of(const Runs& runs, const std::vector<std::string>& path) {
  std::vector<double> out;
  for (const RunResult* r : runs) {
    if (auto v = number_at(r->metrics, path)) out.push_back(*v);
  }
  return out;
}

json summary(const std::vector<double>& values) {
  json vals = json::array();
  for (double v : values) vals.push_back(number(v));
  return {{"mean", number(mean(values))}, {"std", number(stddev(values))}, {"values", vals}};
}

// ------------------------------------------------------------------ grouping

std::vector<std::string> ordered_variants(const ReportInput& in) {
  std::vector<std::string> order;
  auto add = [&](const std::string& v) {
    if (std::find(order.begin(), order.end(), v) == order.end()) order.push_back(v);
  };
  for (const auto& v : in.variant_order) add(v);
  for (const auto& r : in.runs) add(r.variant);
  return order;
}

// The runs of one variant, by seed; two runs with the same seed are an input error.
Runs runs_of(const ReportInput& in, const std::string& variant) {
  Runs out;
  for (const auto& r : in.runs) {
    if (r.variant == variant) out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RunResult* a, const RunResult* b) { return a->seed < b->seed; });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i]->seed == out[i - 1]->seed) {
      throw InputError("report: variant '" + variant + "' has two runs with seed " +
                       std::to_string(out[i]->seed));
    }
  }
  return out;
}

// ------------------------------------------------------------------ significance

class LineCache {
 public:
  const std::vector<std::string>& get(const std::string& path) {
    auto it = files_.find(path);
    if (it == files_.end()) it = files_.emplace(path, read_lines(path)).first;
    return it->second;
  }

 private:
  std::map<std::string, std::vector<std::string>> files_;
};

// The first seed (smallest) for which both variants have a hypothesis file of this test.
std::optional<std::pair<const RunResult*, const RunResult*>> common_seed(const Runs& base,
                                                                         const Runs& var,
                                                                         const std::string& test) {
  for (const RunResult* b : base) {
    if (!b->hyp_files.count(test)) continue;
    for (const RunResult* v : var) {
      if (v->seed == b->seed && v->hyp_files.count(test)) return std::make_pair(b, v);
    }
  }
  return std::nullopt;
}

void check_length(const std::string& hyp, size_t n_hyp, const std::string& ref, size_t n_ref) {
  if (n_hyp != n_ref) {
    throw input_error(hyp, 0, "has " + std::to_string(n_hyp) + " lines but the reference " + ref +
                                  " has " + std::to_string(n_ref));
  }
}

// {p_value, p_seed, p_samples}, all null when there is nothing to compare.
json significance(const Runs& base, const Runs& var, const std::string& test,
                  const ReportInput& in, int samples, LineCache* cache) {
  json out = {{"p_value", nullptr}, {"p_seed", nullptr}, {"p_samples", nullptr}};
  const auto ref = in.ref_files.find(test);
  if (samples < 1 || ref == in.ref_files.end()) return out;
  const auto pair = common_seed(base, var, test);
  if (!pair) return out;
  const std::string& path_a = pair->first->hyp_files.at(test);
  const std::string& path_b = pair->second->hyp_files.at(test);
  const auto& refs = cache->get(ref->second);
  const auto& a = cache->get(path_a);
  const auto& b = cache->get(path_b);
  check_length(path_a, a.size(), ref->second, refs.size());
  check_length(path_b, b.size(), ref->second, refs.size());
  const BootstrapResult r = paired_bootstrap_bleu(a, b, refs, samples);
  out["p_value"] = r.p_value;
  out["p_seed"] = pair->first->seed;
  out["p_samples"] = r.samples;
  return out;
}

json test_entry(const Runs& runs, const Runs* base, bool is_baseline, const std::string& test,
                const ReportInput& in, int samples, LineCache* cache) {
  json t = json::object();
  for (const auto& key : metric_keys(runs, test, in.metric)) {
    t[key] = summary(values_of(runs, {"tests", test, key}));
  }
  // Δ of the report's metric, baseline mean as reference.
  const std::string delta = "delta_" + in.metric;
  t[delta] = nullptr;
  const double m = mean(values_of(runs, {"tests", test, in.metric}));
  if (base) {
    const double b = mean(values_of(*base, {"tests", test, in.metric}));
    if (std::isfinite(m) && std::isfinite(b)) t[delta] = is_baseline ? json(0.0) : number(m - b);
  }
  json sig = {{"p_value", nullptr}, {"p_seed", nullptr}, {"p_samples", nullptr}};
  if (base && !is_baseline && in.metric == "bleu") {
    sig = significance(*base, runs, test, in, samples, cache);
  }
  t.update(sig);
  return t;
}

json mean_of(const Runs& runs, const std::string& key) {
  const auto v = values_of(runs, {key});
  return v.empty() ? json(nullptr) : number(mean(v));
}

}  // namespace

json build_report(const ReportInput& in, int bootstrap_samples) {
  const auto tests = test_names(in);
  const Runs base = runs_of(in, in.baseline);
  const Runs* base_ptr = base.empty() ? nullptr : &base;
  LineCache cache;
  json report = json::array();
  for (const auto& variant : ordered_variants(in)) {
    const Runs runs = runs_of(in, variant);
    if (runs.empty()) continue;
    json seeds = json::array();
    for (const RunResult* r : runs) seeds.push_back(r->seed);
    json entry = {{"variant", variant},
                  {"baseline", variant == in.baseline},
                  {"seeds", runs.size()},
                  {"seed_list", seeds}};
    for (const char* key : {"params", "emb", "red", "tokens_per_s", "wall_s"}) {
      entry[key] = mean_of(runs, key);
    }
    json t = json::object();
    for (const auto& test : tests) {
      t[test] = test_entry(runs, base_ptr, variant == in.baseline, test, in, bootstrap_samples, &cache);
    }
    entry["tests"] = t;
    report.push_back(entry);
  }
  return report;
}

std::string metric_name(const std::string& key) {
  static const std::map<std::string, std::string> names = {
      {"bleu", "BLEU"}, {"chrf", "chrF"}, {"chrf_pp", "chrF++"}, {"chrfpp", "chrF++"},
      {"chrf++", "chrF++"}, {"ppl", "PPL"}, {"ppl_word", "word PPL"}, {"loss", "Loss"}};
  auto it = names.find(key);
  return it == names.end() ? key : it->second;
}

// ------------------------------------------------------------------ number formatting

namespace {

std::string printf_str(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Three significant digits with a unit: 7.58M, 74.8M, 123M, 45.2k, 950.
std::string compact(double v) {
  const double a = std::fabs(v);
  const char* suffix = "";
  double scaled = v;
  if (a >= 1e9) scaled = v / 1e9, suffix = "G";
  else if (a >= 1e6) scaled = v / 1e6, suffix = "M";
  else if (a >= 1e3) scaled = v / 1e3, suffix = "k";
  else return printf_str(a >= 100 || v == std::floor(v) ? "%.0f" : "%.3g", v);
  const double s = std::fabs(scaled);
  const char* f = s >= 99.95 ? "%.0f" : s >= 9.995 ? "%.1f" : "%.2f";
  return printf_str(f, scaled) + suffix;
}

std::string signed2(double v) {
  std::string s = printf_str("%+.2f", v);
  if (s == "-0.00") s = "+0.00";
  return s;
}

std::string p_text(double p) { return p < 0.001 ? "<0.001" : printf_str("%.3f", p); }

bool lower_is_better(const std::string& metric) { return metric == "ppl" || metric == "loss"; }

std::optional<double> get(const json& j, const std::string& key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

// One test's entry of one variant, or an empty object.
json test_of(const json& entry, const std::string& test) {
  return entry.value("tests", json::object()).value(test, json::object());
}

// ------------------------------------------------------------------ the table, once for all formats

struct Cell {
  std::string text = "\xE2\x80\x94";  // "—": no value
  double value = NAN;                 // what "best" compares; NaN takes no part
};

struct Column {
  std::string header;
  int better = 0;  // +1 higher is better, −1 lower is better, 0 no best
  bool numeric = true;
  std::vector<Cell> cells;
  bool any_value() const {
    return std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.text != Cell().text; });
  }
};

Column scalar_column(const json& report, const std::string& header, const std::string& key,
                     int better, std::string (*format)(double)) {
  Column c{header, better, true, {}};
  for (const auto& e : report) {
    Cell cell;
    if (auto v = get(e, key)) cell = {format(*v), *v};
    c.cells.push_back(cell);
  }
  return c;
}

std::string percent(double v) { return printf_str("%.1f%%", v * 100); }
std::string duration(double v) { return format_duration(v); }

Column metric_column(const json& report, const std::string& test, const std::string& key,
                     const std::string& header) {
  Column c{header, lower_is_better(key) ? -1 : 1, true, {}};
  for (const auto& e : report) {
    Cell cell;
    const json& s = test_of(e, test).value(key, json::object());
    if (auto m = get(s, "mean")) {
      cell.value = *m;
      cell.text = printf_str("%.2f", *m);
      if (s.contains("values") && s["values"].size() > 1) {
        if (auto sd = get(s, "std")) cell.text += " \xC2\xB1 " + printf_str("%.2f", *sd);
      }
    }
    c.cells.push_back(cell);
  }
  return c;
}

Column delta_column(const json& report, const std::string& test, const std::string& metric,
                    const std::string& header) {
  Column c{header, lower_is_better(metric) ? -1 : 1, true, {}};
  for (const auto& e : report) {
    Cell cell;
    const bool base = e.value("baseline", false);
    auto d = get(test_of(e, test), "delta_" + metric);
    if (d && !base) cell = {signed2(*d), *d};
    c.cells.push_back(cell);
  }
  return c;
}

Column p_column(const json& report, const std::string& test, const std::string& header) {
  Column c{header, 0, true, {}};
  for (const auto& e : report) {
    Cell cell;
    if (auto p = get(test_of(e, test), "p_value")) cell = {p_text(*p), *p};
    c.cells.push_back(cell);
  }
  return c;
}

std::set<std::string> report_metric_keys(const json& report, const std::string& test) {
  std::set<std::string> keys;
  for (const auto& e : report) {
    const json t = test_of(e, test);
    for (const auto& [k, v] : t.items()) {
      if (v.is_object() && v.contains("mean")) keys.insert(k);
    }
  }
  return keys;
}

// The report's metric first, then the others by name.
std::vector<std::string> ordered_keys(const json& report, const std::string& test,
                                      const std::string& primary) {
  const auto keys = report_metric_keys(report, test);
  std::vector<std::string> order;
  if (keys.count(primary)) order.push_back(primary);
  for (const auto& k : keys) {
    if (k != primary) order.push_back(k);
  }
  return order;
}

std::vector<Column> build_columns(const json& report, const ReportInput& in) {
  std::vector<Column> cols;
  Column name{"Variant", 0, false, {}};
  bool seeds_differ = false;
  for (const auto& e : report) {
    std::string text = e.value("variant", "");
    if (e.value("baseline", false)) text += " (baseline)";
    name.cells.push_back({text, NAN});
    seeds_differ |= e.value("seeds", 0) != report[0].value("seeds", 0);
  }
  cols.push_back(name);
  if (seeds_differ) cols.push_back(scalar_column(report, "Seeds", "seeds", 0, compact));
  cols.push_back(scalar_column(report, "Params", "params", -1, compact));
  cols.push_back(scalar_column(report, "Emb.", "emb", -1, compact));
  cols.push_back(scalar_column(report, "Red.", "red", 1, percent));
  const auto tests = test_names(in);
  const bool several = tests.size() > 1;
  for (const auto& test : tests) {
    for (const auto& k : ordered_keys(report, test, in.metric)) cols.push_back(metric_column(report, test, k, metric_name(k) + " " + test));
    const std::string suffix = several ? " " + test : "";
    cols.push_back(delta_column(report, test, in.metric,
                                "\xCE\x94 " + metric_name(in.metric) + suffix));
    cols.push_back(p_column(report, test, "p" + suffix));
  }
  cols.push_back(scalar_column(report, "tok/s", "tokens_per_s", 1, compact));
  cols.push_back(scalar_column(report, "wall", "wall_s", -1, duration));
  // Columns nobody has a value for (no chrF, no timing, "ppl" without p) only add noise.
  std::vector<Column> kept;
  for (auto& c : cols) {
    if (!c.numeric || c.any_value()) kept.push_back(std::move(c));
  }
  return kept;
}

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

std::string legend_text(const json& report, const ReportInput& in, const std::vector<Column>& cols) {
  auto has = [&](const std::string& prefix) {
    return std::any_of(cols.begin(), cols.end(),
                       [&](const Column& c) { return c.header.rfind(prefix, 0) == 0; });
  };
  std::vector<std::string> parts;
  if (has("Params")) parts.push_back("Params: all model parameters");
  if (has("Emb.")) {
    parts.push_back("Emb.: parameters that represent words (embedding and output matrices, "
                    "counted once when shared)");
  }
  if (has("Red.")) parts.push_back("Red.: reduction of Emb. against untied embeddings");
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& e : report) {
    const size_t n = e.value("seeds", size_t(0));
    lo = std::min(lo, n), hi = std::max(hi, n);
  }
  const std::string seeds = report.empty() ? "0"
                            : lo == hi     ? std::to_string(lo)
                                           : std::to_string(lo) + "\xE2\x80\x93" + std::to_string(hi);
  parts.push_back("scores: mean \xC2\xB1 std over " + seeds + (seeds == "1" ? " seed" : " seeds"));
  const std::string m = metric_name(in.metric);
  parts.push_back("\xCE\x94 " + m + ": difference of the mean " + m + " to the baseline (" +
                  in.baseline + ")");
  if (has("p")) {
    int samples = 0;
    for (const auto& e : report) {
      const json tests = e.value("tests", json::object());
      for (const auto& [name, t] : tests.items()) {
        if (t.contains("p_samples") && t["p_samples"].is_number()) samples = t["p_samples"].get<int>();
      }
    }
    if (samples > 0)  // none for perplexity: there is no per-sentence hypothesis to resample
      parts.push_back("p: paired bootstrap resampling (Koehn 2004, " + std::to_string(samples) +
                      " resamples, first seed common to both), the probability that the variant "
                      "is not better than the baseline");
  }
  if (has("tok/s")) parts.push_back("tok/s: training tokens per second");
  if (has("wall")) parts.push_back("wall: training wall-clock time");
  return join(parts, "; ") + ".";
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

// ------------------------------------------------------------------ CSV

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// 12 significant digits: 35.2 rather than 35.199999999999996 (report.json keeps every bit).
std::string csv_number(const json& v) {
  if (!v.is_number()) return "";
  if (v.is_number_integer()) return v.dump();
  return printf_str("%.12g", v.get<double>());
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

std::string report_markdown(const json& report, const ReportInput& in) {
  const auto cols = build_columns(report, in);
  std::string md;
  if (!in.title.empty()) md += "# " + md_escape(in.title) + "\n\n";
  std::string header = "|", rule = "|";
  for (const auto& c : cols) {
    header += " " + md_escape(c.header) + " |";
    rule += c.numeric ? " ---: |" : " :--- |";
  }
  md += header + "\n" + rule + "\n";
  for (size_t r = 0; r < report.size(); ++r) {
    std::string row = "|";
    for (const auto& c : cols) row += " " + md_escape(c.cells[r].text) + " |";
    md += row + "\n";
  }
  return md + "\n" + legend_text(report, in, cols) + "\n";
}

std::string report_csv(const json& report, const ReportInput& in) {
  std::vector<std::string> header = {"variant", "baseline", "seeds", "params", "emb", "red",
                                     "tokens_per_s", "wall_s"};
  const auto tests = test_names(in);
  std::vector<std::pair<std::string, std::vector<std::string>>> test_keys;
  for (const auto& test : tests) {
    const std::vector<std::string> keys = ordered_keys(report, test, in.metric);
    for (const auto& k : keys) {
      header.push_back(test + "." + k + ".mean");
      header.push_back(test + "." + k + ".std");
    }
    header.push_back(test + ".delta_" + in.metric);
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
    std::vector<std::string> row = {e.value("variant", ""), e.value("baseline", false) ? "true" : "false",
                                    csv_number(e.value("seeds", json()))};
    for (const char* key : {"params", "emb", "red", "tokens_per_s", "wall_s"}) {
      row.push_back(csv_number(e.value(key, json())));
    }
    for (const auto& [test, keys] : test_keys) {
      const json t = test_of(e, test);
      for (const auto& k : keys) {
        const json s = t.value(k, json::object());
        row.push_back(csv_number(s.value("mean", json())));
        row.push_back(csv_number(s.value("std", json())));
      }
      row.push_back(csv_number(t.value("delta_" + in.metric, json())));
      row.push_back(csv_number(t.value("p_value", json())));
    }
    emit(row);
  }
  return out;
}

std::string report_html(const json& report, const ReportInput& in, const std::string&) {
  const auto cols = build_columns(report, in);
  const std::string title = in.title.empty() ? "Experiment report" : in.title;
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      html_escape(title) +
      "</title>\n<style>\n"
      "body{font-family:sans-serif;color:#222;max-width:1200px;margin:2em auto;padding:0 1em;}\n"
      "h1{font-size:1.5em;}\n"
      "table{border-collapse:collapse;margin:1em 0;font-size:0.95em;}\n"
      "th,td{padding:0.35em 0.8em;border-bottom:1px solid #ddd;white-space:nowrap;}\n"
      "th{border-bottom:2px solid #444;text-align:center;}\n"
      "td.num{text-align:right;font-variant-numeric:tabular-nums;}\n"
      "tr.baseline td{background:#f2f5fa;}\n"
      "p.legend{font-size:0.85em;color:#555;max-width:60em;}\n"
      "figure{margin:1.5em 0;}\n"
      "figure img{max-width:100%;height:auto;border:1px solid #eee;}\n"
      "figcaption{font-size:0.9em;color:#444;margin-top:0.3em;}\n"
      "footer{margin-top:2em;font-size:0.8em;color:#777;border-top:1px solid #ddd;padding-top:0.5em;}\n"
      "</style>\n</head>\n<body>\n<h1>" +
      html_escape(title) + "</h1>\n<table>\n<thead><tr>";
  for (const auto& c : cols) h += "<th>" + html_escape(c.header) + "</th>";
  h += "</tr></thead>\n<tbody>\n";
  std::vector<std::vector<bool>> best;
  for (const auto& c : cols) best.push_back(best_rows(c));
  for (size_t r = 0; r < report.size(); ++r) {
    h += report[r].value("baseline", false) ? "<tr class=\"baseline\">" : "<tr>";
    for (size_t ci = 0; ci < cols.size(); ++ci) {
      const std::string text = html_escape(cols[ci].cells[r].text);
      h += cols[ci].numeric ? "<td class=\"num\">" : "<td>";
      h += best[ci][r] ? "<strong>" + text + "</strong>" : text;
      h += "</td>";
    }
    h += "</tr>\n";
  }
  h += "</tbody>\n</table>\n<p class=\"legend\">" + html_escape(legend_text(report, in, cols)) +
       " Bold: the best value of each column.</p>\n";
  for (const auto& [caption, path] : in.pictures) {
    h += "<figure>\n<img src=\"" + html_escape(path) + "\" alt=\"" + html_escape(caption) +
         "\">\n<figcaption>" + html_escape(caption) + "</figcaption>\n</figure>\n";
  }
  h += "<footer>Generated by yoke on " + now_utc() + ".</footer>\n</body>\n</html>\n";
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
  const json report = build_report(in);
  const json wrapped = {{"title", in.title},       {"baseline", in.baseline},
                        {"metric", in.metric},     {"test_names", test_names(in)},
                        {"generated", now_utc()},  {"variants", report}};
  write_json(dir + "/report.json", wrapped);
  write_file_atomically(dir + "/report.md", report_markdown(report, in));
  write_file_atomically(dir + "/report.csv", report_csv(report, in));
  write_file_atomically(dir + "/report.html", report_html(report, in));
}

}  // namespace yoke
