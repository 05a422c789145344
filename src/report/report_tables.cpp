#include "report/report_tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "report/registered_report.h"
#include "report/report_statistics.h"
#include "report/signed_number.h"
#include "util/progress.h"

namespace yoke {

using namespace report_detail;

// ------------------------------------------------------------------ number formatting

namespace {

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

// "+0.32", "−0.11" (a real minus sign, as in the tables of the papers), never "−0.00".
std::string signed2(double v) { return signed_number(v, /*unicode_minus=*/true); }

std::string p_text(double p) { return p < 0.001 ? "<0.001" : printf_str("%.3f", p); }



// "[−0.12, +0.71]" from [low, high].
std::string pair_text(double low, double high) { return "[" + signed2(low) + ", " + signed2(high) + "]"; }

// A number written through report.json's integral-or-null rule (report/variant_report.h), when finite.
std::optional<double> finite(std::optional<double> v) { return v && std::isfinite(*v) ? v : std::nullopt; }

// The interval the verdict reads (report/verdict.h), or "" without one.
std::string ci_text(const VariantTest& t) { return t.interval ? pair_text(t.interval->low, t.interval->high) : ""; }

// The level of the verdicts' intervals in a table, "97.5%", or "" when none has one.
std::string interval_level_text(const std::vector<VariantEntry>& report, const std::vector<std::string>& tests) {
  for (const auto& e : report)
    for (const auto& test : tests)
      if (const auto& i = e.test(test).interval) {
        std::string s = printf_str("%.3f", 100.0 * i->level);
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
        return s + "%";
      }
  return "";
}

// The Δ of the report's metric with its interval and p where there are: "+0.32 [−0.12, +0.71], p 0.302".
std::string delta_text(const VariantTest& t) {
  const auto d = finite(t.delta);
  if (!d) return "";
  std::string s = signed2(*d);
  if (const std::string ci = ci_text(t); !ci.empty()) s += " " + ci;
  if (t.p_adjusted) s += ", p adj. " + p_text(*t.p_adjusted);
  return s;
}

// ------------------------------------------------------------------ tables, once for all formats


// A column of one of the variants' means (RunNumbers), or of what `value` reads from an entry.
Column scalar_column(const std::vector<VariantEntry>& report, const std::string& header,
                     const std::function<std::optional<double>(const VariantEntry&)>& value, int better,
                     std::string (*format)(double)) {
  Column c{header, better, true, {}};
  for (const auto& e : report) {
    Cell cell;
    if (auto v = finite(value(e))) cell = {format(*v), *v};
    c.cells.push_back(cell);
  }
  return c;
}
Column scalar_column(const std::vector<VariantEntry>& report, const std::string& header,
                     std::optional<double> RunNumbers::*mean, int better, std::string (*format)(double)) {
  return scalar_column(report, header, [mean](const VariantEntry& e) { return e.means.*mean; }, better, format);
}

std::string percent(double v) { return printf_str("%.1f%%", v * 100); }
std::string duration(double v) { return format_duration(v); }
std::string whole(double v) { return printf_str("%.0f", v); }

Column metric_column(const std::vector<VariantEntry>& report, const std::string& test, const std::string& key,
                     const std::string& header) {
  Column c{header, lower_is_better(key) ? -1 : 1, true, {}};
  for (const auto& e : report) {
    Cell cell;
    const auto& metrics = e.test(test).metrics;
    if (const auto s = metrics.find(key); s != metrics.end() && std::isfinite(s->second.mean)) {
      cell.value = s->second.mean;
      cell.text = printf_str("%.2f", s->second.mean);
      if (s->second.values.size() > 1 && std::isfinite(s->second.std))
        cell.text += " \xC2\xB1 " + printf_str("%.2f", s->second.std);
    }
    c.cells.push_back(cell);
  }
  return c;
}

// Text cells of one test entry per variant; the baseline's stay empty.
Column text_column(const std::vector<VariantEntry>& report, const std::string& test, const std::string& header,
                   bool numeric, const std::function<std::string(const VariantTest& t)>& text) {
  Column c{header, 0, numeric, {}};
  for (const auto& e : report) {
    Cell cell;
    if (!e.baseline) {
      const std::string s = text(e.test(test));
      if (!s.empty()) cell.text = s;
    }
    c.cells.push_back(cell);
  }
  return c;
}

Column delta_column(const std::vector<VariantEntry>& report, const std::string& test, const std::string& metric,
                    const std::string& header) {
  Column c{header, lower_is_better(metric) ? -1 : 1, true, {}};
  for (const auto& e : report) {
    Cell cell;
    const auto d = finite(e.test(test).delta);
    if (d && !e.baseline) cell = {signed2(*d), *d};
    c.cells.push_back(cell);
  }
  return c;
}

Column p_column(const std::vector<VariantEntry>& report, const std::string& test, const std::string& header,
                std::optional<double> VariantTest::*p_field) {
  Column c{header, 0, true, {}};
  for (const auto& e : report) {
    Cell cell;
    if (const auto& p = e.test(test).*p_field) cell = {p_text(*p), *p};
    c.cells.push_back(cell);
  }
  return c;
}

std::string per_seed_text(const VariantTest& t) {
  std::string s;
  for (const SeedDelta& d : t.delta_per_seed) {
    if (!std::isfinite(d.delta)) continue;
    s += (s.empty() ? "" : ", ") + signed2(d.delta) + " (" + std::to_string(d.seed) + ")";
  }
  return s;
}

std::set<std::string> report_metric_keys(const std::vector<VariantEntry>& report, const std::string& test) {
  std::set<std::string> keys;
  for (const auto& e : report)
    for (const auto& [k, summary] : e.test(test).metrics) keys.insert(k);
  return keys;
}

Column variant_column(const std::vector<VariantEntry>& report) {
  Column name{"Variant", 0, false, {}};
  for (const auto& e : report) name.cells.push_back({e.variant + (e.baseline ? " (baseline)" : ""), NAN});
  return name;
}

// Columns nobody has a value for (no chrF, no timing, "ppl" without p) only add noise.
std::vector<Column> kept(std::vector<Column> cols) {
  std::vector<Column> out;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (i == 0 || cols[i].any_value()) out.push_back(std::move(cols[i]));  // the first names the rows
  }
  return out;
}

bool any_p(const std::vector<VariantEntry>& report, const std::vector<std::string>& tests) {
  for (const auto& e : report)
    for (const auto& test : tests)
      if (e.test(test).p_value) return true;
  return false;
}

std::string seeds_text(const std::vector<VariantEntry>& report) {
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& e : report) {
    const size_t n = e.seeds.size();
    lo = std::min(lo, n), hi = std::max(hi, n);
  }
  const std::string n = report.empty() ? "0"
                        : lo == hi     ? std::to_string(lo)
                                       : std::to_string(lo) + "\xE2\x80\x93" + std::to_string(hi);
  return n + (n == "1" ? " seed" : " seeds");
}

// The main table: what a paper prints. One score column per test set (the report's metric,
// mean ± std) and its Δ to the baseline with the interval and p. `stacked` (HTML) puts the Δ
// under the score in the same cell, so four test sets still fit a 1280-pixel screen.
Table main_table(const std::vector<VariantEntry>& report, const ReportInput& in, bool stacked) {
  Table t;
  std::vector<Column> cols{variant_column(report)};
  bool seeds_differ = false;
  for (const auto& e : report) seeds_differ |= e.seeds.size() != report[0].seeds.size();
  if (seeds_differ)
    cols.push_back(scalar_column(report, "Seeds", [](const VariantEntry& e) { return double(e.seeds.size()); }, 0, compact));
  cols.push_back(scalar_column(report, "Params", &RunNumbers::params, -1, compact));
  cols.push_back(scalar_column(report, "Emb.", &RunNumbers::emb, -1, compact));
  cols.push_back(scalar_column(report, "Red.", &RunNumbers::red, 1, percent));
  const auto tests = test_names(in);
  const std::string m = metric_name(in.metric);
  auto suffix = [&](const std::string& test) { return tests.size() > 1 ? " " + test : ""; };
  std::vector<Column> deltas;
  for (const auto& test : tests) {
    Column score = metric_column(report, test, in.metric, m + " " + test);
    Column delta = text_column(report, test, "\xCE\x94 " + m + suffix(test), true,
                                delta_text);
    if (stacked) {
      for (size_t r = 0; r < score.cells.size(); ++r)
        if (delta.cells[r].text != Cell().text) score.cells[r].note = "\xCE\x94 " + delta.cells[r].text;
      score.header_note = any_p(report, tests) ? "\xCE\x94 [interval], p adj." : "\xCE\x94";
    } else {
      deltas.push_back(std::move(delta));
    }
    cols.push_back(std::move(score));
  }
  for (auto& d : deltas) cols.push_back(std::move(d));
  cols.push_back(scalar_column(report, "tok/s", &RunNumbers::tokens_per_s, 1, compact));
  t.columns = kept(std::move(cols));

  std::vector<std::string> parts;
  parts.push_back("Params: all model parameters");
  parts.push_back("Emb.: parameters that represent words (embedding and output matrices, counted once when shared)");
  parts.push_back("Red.: reduction of Emb. against untied embeddings");
  parts.push_back("scores: mean \xC2\xB1 std over " + seeds_text(report));
  std::string d = "\xCE\x94 " + m + ": difference of the mean " + m + " to the baseline (" + in.baseline + ")";
  if (any_p(report, tests)) {
    d += ", with the interval [low, high] its verdict reads (" + interval_level_text(report, tests) +
         ", simultaneous over the variants) and the two-sided p adjusted to match, from a test that counts the noise "
         "of the seeds and of the test sentences (docs/statistics.md; Koehn 2004, Clark et al. 2011)";
  }
  parts.push_back(d);
  if (std::any_of(t.columns.begin(), t.columns.end(), [](const Column& c) { return c.header == "tok/s"; }))
    parts.push_back("tok/s: training tokens per second");
  t.legend = join(parts, "; ") + ".";
  return t;
}

// One test set: every metric, Δ, its interval, p and the Δ of each seed.
Table test_table(const std::vector<VariantEntry>& report, const ReportInput& in, const std::string& test) {
  Table t;
  t.heading = "Test set " + test;
  std::vector<Column> cols{variant_column(report)};
  for (const auto& k : ordered_keys(report, test, in.metric)) cols.push_back(metric_column(report, test, k, metric_name(k)));
  cols.push_back(delta_column(report, test, in.metric, "\xCE\x94 " + metric_name(in.metric)));
  cols.push_back(text_column(report, test, "interval", true, ci_text));
  cols.push_back(p_column(report, test, "p", &VariantTest::p_value));
  cols.push_back(p_column(report, test, "p adj.", &VariantTest::p_adjusted));
  cols.push_back(text_column(report, test, "detectable", true, [](const VariantTest& t) {
    return t.test && t.test->detectable ? printf_str("%.2f", *t.test->detectable) : "";
  }));
  cols.push_back(text_column(report, test, "\xCE\x94 per seed (seed)", true, per_seed_text));
  cols.push_back(text_column(report, test, "sentences only: 95% CI, p", true, [](const VariantTest& t) {
    const auto& b = t.sentence_bootstrap;
    return b ? pair_text(b->low, b->high) + ", p " + p_text(b->p_value) : "";
  }));
  cols.push_back(text_column(report, test, "expected", true,
                             [](const VariantTest& t) { return t.expected ? signed2(*t.expected) : ""; }));
  cols.push_back(text_column(report, test, "verdict", false, [](const VariantTest& t) {
    return t.verdict ? t.verdict->verdict.verdict + ": " + t.verdict->verdict.why : "";
  }));
  t.columns = kept(std::move(cols));
  auto has = [&](const std::string& header) {
    return std::any_of(t.columns.begin(), t.columns.end(), [&](const Column& c) { return c.header == header; });
  };
  std::vector<std::string> parts{"Scores: mean \xC2\xB1 std over " + seeds_text(report)};
  if (has("p"))
    parts.push_back("\xCE\x94 and p: the variant against the baseline by a t test whose variance adds the seeds' and "
                    "the test sentences' parts (two-sided; docs/statistics.md); interval: the " +
                    interval_level_text(report, {test}) +
                    " interval, simultaneous over the variants of this table (Bonferroni), from which the verdict "
                    "reads every claim; p adj.: p times the number of variants compared (at most 1), below the level "
                    "exactly when the interval excludes 0; detectable: the smallest \xCE\x94 this test finds with 80% "
                    "power at the interval's level");
  parts.push_back("\xCE\x94 per seed: the variant's " + metric_name(in.metric) +
                  " minus the baseline's, for each seed both have");
  if (has("sentences only: 95% CI, p"))
    parts.push_back("sentences only: Koehn's paired bootstrap over test sentences with the seeds held fixed (it leaves "
                    "out the seeds' noise: shown for comparison, not for deciding)");
  if (has("expected")) parts.push_back("expected: the effect the seed paper reports");
  if (has("verdict")) parts.push_back("verdict: by the rule of docs/results/README.md");
  t.legend = join(parts, "; ") + ".";
  return t;
}

// One row per run: how long it trained and whether its validation had plateaued.
Table runs_table(const std::vector<VariantEntry>& report) {
  Table t;
  t.heading = "Runs";
  Column variant{"Variant", 0, false, {}}, seed{"seed", 0, true, {}}, updates{"updates", 0, true, {}},
      stop{"stopped by", 0, false, {}}, converged{"converged", 0, false, {}};
  bool any = false;
  for (const auto& e : report)
    for (const RunLine& r : e.runs) {
      variant.cells.push_back({e.variant, NAN});
      seed.cells.push_back({std::to_string(r.seed), NAN});
      const auto u = finite(r.updates);
      updates.cells.push_back(u ? Cell{whole(*u), NAN} : Cell());
      stop.cells.push_back(r.stop_reason.empty() ? Cell() : Cell{r.stop_reason, NAN});
      if (r.convergence) {
        any = true;
        converged.cells.push_back({std::string(r.convergence->converged ? "yes" : "no") + ": " + r.convergence->why, NAN});
      } else {
        converged.cells.push_back(Cell());
      }
    }
  if (!any) return t;
  t.columns = {variant, seed, updates, stop, converged};
  t.legend = "converged: early stopping fired, or over the last five validations the validation loss falls by less "
             "than 0.5% of itself with 95% confidence (the least-squares slope's one-sided bound; docs/statistics.md); "
             "a verdict on a model's quality counts converged runs only.";
  return t;
}

// How the runs trained and what their parameters are made of (seed 004 §4.5 and §5.1).
Table training_table(const std::vector<VariantEntry>& report) {
  Table t;
  t.heading = "Training";
  t.columns = kept({variant_column(report), scalar_column(report, "updates", &RunNumbers::updates, 0, whole),
                    scalar_column(report, "wall", &RunNumbers::wall_s, -1, duration),
                    scalar_column(report, "output share of \xE2\x88\x82W, first 10%", &RunNumbers::grad_share_output_early,
                                  0, percent),
                    scalar_column(report, "last 10%", &RunNumbers::grad_share_output_late, 0, percent),
                    scalar_column(report, "Emb. / Params", &RunNumbers::emb_fraction, 0, percent),
                    scalar_column(report, "closed form", &RunNumbers::emb_fraction_closed_form, 0, percent)});
  auto has = [&](const std::string& header) {
    return std::any_of(t.columns.begin(), t.columns.end(), [&](const Column& c) { return c.header == header; });
  };
  std::vector<std::string> parts{"means over seeds", "wall: training wall-clock time"};
  if (has("last 10%"))
    parts.push_back("output share of \xE2\x88\x82W: the share of \xE2\x80\x96\xE2\x88\x82L/\xE2\x88\x82W\xE2\x80\x96\xC2\xB2 of "
                    "the word matrices that comes through the output projection (path B) rather than the input "
                    "lookups (path A), mean over the first and the last 10% of updates (seed 004 \xC2\xA7" "4.5)");
  if (has("closed form"))
    parts.push_back("closed form: the word matrices' share of the parameters with 12d\xC2\xB2 per layer, "
                    "Vd/(Vd + 12Ld\xC2\xB2) = 1/(1 + 12Ld/V) tied and 2Vd/(2Vd + 12Ld\xC2\xB2) untied (seed 004 \xC2\xA7" "5.1)");
  t.legend = join(parts, "; ") + ".";
  return t;
}

// yoke's parameter counts beside the seed paper's own row for each variant (grid key `paper`).
Table paper_table(const std::vector<VariantEntry>& report, const ReportInput& in) {
  Table t;
  if (in.paper.empty()) return t;
  t.heading = "Beside the seed paper" + (in.paper_source.empty() ? std::string() : " (" + in.paper_source + ")");
  Column p_params{"paper Params", 0, true, {}}, p_emb{"paper Emb.", 0, true, {}}, p_red{"paper Red.", 0, true, {}},
      p_score{"paper score", 0, true, {}};
  bool any_score = false;
  for (const auto& e : report) {
    const auto row = in.paper.find(e.variant);
    auto field = [&](size_t i) { return row != in.paper.end() && i < row->second.size() ? Cell{row->second[i], NAN} : Cell(); };
    p_params.cells.push_back(field(0));
    p_emb.cells.push_back(field(1));
    p_red.cells.push_back(field(2));
    p_score.cells.push_back(field(3));
    any_score |= row != in.paper.end() && row->second.size() > 3;
  }
  t.columns = {variant_column(report), scalar_column(report, "Params", &RunNumbers::params, 0, compact),
               scalar_column(report, "Emb.", &RunNumbers::emb, 0, compact),
               scalar_column(report, "Red.", &RunNumbers::red, 0, percent),
               p_params, p_emb, p_red};
  if (any_score) t.columns.push_back(p_score);
  t.legend = "Params, Emb., Red.: this experiment's models, counted; paper: the seed paper's row for the same system, "
             "as it prints it (its vocabularies and model size, not these).";
  return t;
}

// The registered decision (report/registered_report.h): one row per registered comparison, the
// registration itself in the legend, so that the verdicts are read beside what fixed them.
Table registered_table(const RegisteredDecision& decision) {
  Table t;
  const Registration& reg = decision.registration;
  t.heading = "Registered decision";
  Column name{"comparison", 0, false, {}}, claim{"claim (seed's \xCE\x94, margin)", 0, false, {}},
      delta{"\xCE\x94", 0, true, {}}, interval{"interval", 0, true, {}}, seeds{"seeds", 0, true, {}},
      verdict{"verdict", 0, false, {}}, other{"other pairing (not the verdict)", 0, false, {}};
  for (const DecidedComparison& c : decision.comparisons) {
    name.cells.push_back({c.claim.b + " \xE2\x88\x92 " + c.claim.a, NAN});
    std::string cl = claim_kind_name(c.claim.kind);
    if (c.claim.seed_effect) cl += ", seed " + signed2(*c.claim.seed_effect);
    cl += ", margin " + printf_str("%.2f", c.claim.margin);
    claim.cells.push_back({cl, NAN});
    delta.cells.push_back(c.tested ? Cell{signed2(c.delta), NAN} : Cell());
    interval.cells.push_back(c.tested ? Cell{pair_text(c.interval.low, c.interval.high), NAN} : Cell());
    seeds.cells.push_back({std::to_string(c.seeds_b.size()) + " / " + std::to_string(c.seeds_a.size()), NAN});
    verdict.cells.push_back({c.verdict.verdict + ": " + c.verdict.why, NAN});
    other.cells.push_back(c.sensitivity ? Cell{c.sensitivity->why, NAN} : Cell());
  }
  t.columns = {name, claim, delta, interval, seeds, verdict, other};
  std::string level = printf_str("%.2f", 100.0 * decision.level);
  while (level.back() == '0') level.pop_back();
  if (level.back() == '.') level.pop_back();
  level += "%";
  t.legend = "Registered " + decision.recorded + ", before the first run finished. " +
             "Question: " + reg.question + " Deciding test set: " + reg.test + ", " +
             metric_name(decision.metric) + ". Pairing: " + (reg.paired ? "paired" : "unpaired") + " (" +
             reg.pairing_why + "). Seeds: " + reg.seed_plan + ". Stopping: " +
             reg.stopping + ". \xCE\x94 = mean of the first variant \xE2\x88\x92 mean of the second; " +
             "interval: " + level + ", simultaneous over the " + std::to_string(decision.comparisons.size()) +
             " registered comparisons (Bonferroni), from a test that counts the seeds and the test sentences; seeds: "
             "finished runs of each side; verdict: the registered claim read against its margin (docs/statistics.md, "
             "\"Registered decisions\"); other pairing: the same test with the pairing the registration did not choose, "
             "a sensitivity line.";
  return t;
}

}  // namespace

namespace report_detail {

std::string printf_str(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The report's metric first, then the others by name.
std::vector<std::string> ordered_keys(const std::vector<VariantEntry>& report, const std::string& test,
                                      const std::string& primary) {
  const auto keys = report_metric_keys(report, test);
  std::vector<std::string> order;
  if (keys.count(primary)) order.push_back(primary);
  for (const auto& k : keys) {
    if (k != primary) order.push_back(k);
  }
  return order;
}

std::vector<Table> report_tables(const std::vector<VariantEntry>& report, const ReportInput& in, bool stacked,
                                 const RegisteredDecision* decision) {
  std::vector<Table> tables{main_table(report, in, stacked)};
  if (decision) tables.push_back(registered_table(*decision));
  if (Table paper = paper_table(report, in); !paper.columns.empty()) tables.push_back(std::move(paper));
  for (const auto& test : test_names(in)) tables.push_back(test_table(report, in, test));
  Table training = training_table(report);
  if (training.columns.size() > 1) tables.push_back(std::move(training));
  Table runs = runs_table(report);
  if (!runs.columns.empty()) tables.push_back(std::move(runs));
  return tables;
}

}  // namespace report_detail
}  // namespace yoke
