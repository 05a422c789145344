#include "report/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include "eval/bleu_stats_file.h"
#include "eval/sentence_nll_file.h"
#include "eval/bootstrap.h"
#include "eval/moments.h"
#include "eval/significance.h"
#include "report/signed_number.h"
#include "report/svg_chart.h"
#include "report/verdict.h"
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


// Sample standard deviation (N−1); 0 for a single value.
double stddev(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  return std::sqrt(sample_variance(v));
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

// Per-sentence BLEU statistics of every run of one variant on one test, with the runs' seeds: from
// the statistics files where the runs have them, else from hypotheses and references. Empty when
// some run has neither (the test then uses the per-seed scores alone).
struct RunStats {
  std::vector<std::vector<BleuStats>> runs;
  std::vector<int> seeds;
};

RunStats sentence_stats_of(const Runs& runs, const std::string& test, const ReportInput& in, LineCache* cache) {
  RunStats out;
  for (const RunResult* r : runs) {
    if (auto st = r->stats_files.find(test); st != r->stats_files.end()) {
      out.runs.push_back(read_bleu_stats(st->second));
    } else {
      const auto hyp = r->hyp_files.find(test);
      const auto ref = in.ref_files.find(test);
      if (hyp == r->hyp_files.end() || ref == in.ref_files.end()) return {};
      out.runs.push_back(bleu_stats_of(cache->get(hyp->second), cache->get(ref->second), hyp->second));
    }
    out.seeds.push_back(r->seed);
  }
  for (const auto& run : out.runs)
    if (run.size() != out.runs.front().size())
      throw InputError("report: the outputs of test " + test + " have " + std::to_string(run.size()) + " and " +
                       std::to_string(out.runs.front().size()) + " sentences");
  return out;
}

SeededScores scores_of(const Runs& runs, const std::string& test, const std::string& metric) {
  SeededScores s;
  for (const RunResult* r : runs)
    if (auto v = number_at(r->metrics, {"tests", test, metric})) {
      s.seeds.push_back(r->seed);
      s.scores.push_back(*v);
    }
  return s;
}

json seed_list_json(const std::vector<int>& seeds) {
  json out = json::array();
  for (int s : seeds) out.push_back(s);
  return out;
}

// Per-line NLL of every run of one variant on one test, and the lines' counts (subwords for ppl,
// words for ppl_word); empty when some run has no NLL file.
struct RunNll {
  std::vector<std::vector<double>> runs;
  std::vector<double> count;
};

RunNll sentence_nll_of(const Runs& runs, const std::string& test, const std::string& metric) {
  RunNll out;
  for (const RunResult* r : runs) {
    const auto f = r->nll_files.find(test);
    if (f == r->nll_files.end()) return {};
    SentenceNll lines = read_sentence_nll(f->second);
    const auto& count = metric == "ppl_word" ? lines.words : lines.subwords;
    if (out.runs.empty()) out.count = count;
    if (count != out.count)
      throw InputError("report: " + f->second + ": its lines' counts differ from another run's on test " + test);
    out.runs.push_back(std::move(lines.nll));
  }
  return out;
}

// The runs of both sides whose seed the other side has too, when there are at least two: the
// comparison is then paired. A sequential grid stops adding seeds to a decided variant while the
// baseline goes on; comparing on the common seeds keeps the comparison the look decided with.
std::pair<Runs, Runs> on_common_seeds(const Runs& base, const Runs& var) {
  std::set<int> in_base, common;
  for (const RunResult* r : base) in_base.insert(r->seed);
  for (const RunResult* r : var)
    if (in_base.count(r->seed)) common.insert(r->seed);
  if (common.size() < 2) return {base, var};
  Runs b, v;
  for (const RunResult* r : base)
    if (common.count(r->seed)) b.push_back(r);
  for (const RunResult* r : var)
    if (common.count(r->seed)) v.push_back(r);
  return {b, v};
}

// {p_value, delta_ci95, test, p_seeds, sentence_bootstrap}: eval/significance.h's test of the variant
// against the baseline (test_entry passes the runs of the seeds both have), and for BLEU Koehn's
// sentence-only bootstrap beside it. Null where there is nothing to compare: no
// baseline, the baseline itself, a side without scores.
json significance(const Runs* base_all, bool is_baseline, const Runs& var_all, const std::string& variant,
                  const std::string& test, const ReportInput& in, int samples, LineCache* cache) {
  json out = {{"p_value", nullptr}, {"delta_ci95", nullptr}, {"test", nullptr}, {"p_seeds", nullptr},
              {"sentence_bootstrap", nullptr}, {"expected", nullptr}, {"seeds_needed", nullptr}};
  const auto expected = in.expected.find(variant);
  if (expected != in.expected.end() && !is_baseline) out["expected"] = expected->second;
  if (!base_all || is_baseline) return out;
  const Runs &base = *base_all, &var = var_all;
  const SeededScores a = scores_of(base, test, in.metric), b = scores_of(var, test, in.metric);
  if (a.scores.empty() || b.scores.empty()) return out;
  SignificanceResult r = seed_significance(a, b);
  if (in.metric == "bleu" && samples > 1) {
    const RunStats sa = sentence_stats_of(base, test, in, cache), sb = sentence_stats_of(var, test, in, cache);
    if (!sa.runs.empty() && !sb.runs.empty()) {
      if (sa.runs.front().size() != sb.runs.front().size())
        throw InputError("report: the variants' outputs of test " + test + " differ in length");
      r = bleu_significance(sa.runs, sa.seeds, sb.runs, sb.seeds);
      const BootstrapResult k = paired_bootstrap_bleu_seeds(sa.runs, sb.runs, samples, 12345);
      out["sentence_bootstrap"] = {{"delta_ci95", {k.ci_low, k.ci_high}}, {"p_value", k.p_value}, {"samples", k.samples}};
    }
  } else if (in.metric == "ppl" || in.metric == "ppl_word") {
    const RunNll na = sentence_nll_of(base, test, in.metric), nb = sentence_nll_of(var, test, in.metric);
    if (!na.runs.empty() && !nb.runs.empty()) {
      if (na.count != nb.count)
        throw InputError("report: the variants' NLL files of test " + test + " count different lines or tokens");
      r = perplexity_significance(na.runs, a.seeds, nb.runs, b.seeds, na.count);
    }
  }
  out["p_seeds"] = {{"baseline", seed_list_json(a.seeds)}, {"variant", seed_list_json(b.seeds)}};
  if (!r.testable) return out;
  out["p_value"] = r.p_value;
  out["delta_ci95"] = {r.ci_low, r.ci_high};
  out["test"] = {{"method", r.sentence_part_known ? "seeds and sentences" : "seeds"},
                 {"delta", r.delta},  // of the scores tested (BLEU from the sentence statistics)
                 {"paired", r.paired},
                 {"se", r.se},
                 {"df", r.df},
                 {"var_seed", r.var_seed},
                 {"var_sentence", r.sentence_part_known ? json(r.var_sentence) : json(nullptr)},
                 {"run_var_a", r.run_var_a},
                 {"run_var_b", r.run_var_b}};
  // detectable and seeds_needed follow in decide_all, at the level the verdict tests.
  return out;
}

// Every run of the variant says its validation plateaued (report/convergence via the metrics'
// "convergence" object); null when no run says either way.
json all_converged(const Runs& runs) {
  bool any = false, all = true;
  for (const RunResult* r : runs) {
    const json c = r->metrics.value("convergence", json::object());
    if (!c.contains("converged") || !c["converged"].is_boolean()) {
      all = false;
      continue;
    }
    any = true;
    all = all && c["converged"].get<bool>();
  }
  return any ? json(all) : json(nullptr);
}

json runs_json(const Runs& runs) {
  json out = json::array();
  for (const RunResult* r : runs) {
    const json c = r->metrics.value("convergence", json::object());
    out.push_back({{"seed", r->seed},
                   {"updates", r->metrics.value("updates", json())},
                   {"stop_reason", r->metrics.value("stop_reason", json())},
                   {"converged", c.value("converged", json())},
                   {"why", c.value("why", json())}});
  }
  return out;
}

// Each comparison's verdict, and the simultaneous interval it reads: Bonferroni over the comparisons
// of one test set (report/verdict.h says why one adjustment covers both kinds of claim).
void decide_all(json& report, const std::vector<std::string>& tests, const std::string& metric, double alpha) {
  const json* base = nullptr;
  for (const auto& e : report)
    if (e.value("baseline", false)) base = &e;
  for (const auto& test : tests) {
    int comparisons = 0;
    for (auto& e : report) {
      const json& t = e["tests"][test];
      comparisons += t.contains("p_value") && t["p_value"].is_number();
    }
    for (auto& e : report) {
      if (e.value("baseline", false) || !base) continue;
      json& t = e["tests"][test];
      VerdictInput v;
      v.delta = t.value("delta_" + metric, json(0.0)).is_number() ? t["delta_" + metric].get<double>() : 0.0;
      v.testable = t.contains("p_value") && t["p_value"].is_number();
      if (t["expected"].is_number()) v.expected = t["expected"].get<double>();
      v.alpha = alpha;
      v.comparisons = std::max(1, comparisons);
      if (v.testable) {
        json& test_json = t["test"];
        v.p_value = t["p_value"].get<double>();
        v.delta = test_json.value("delta", v.delta);  // the interval is centred where the test is
        v.se = test_json["se"].get<double>();
        v.df = test_json["df"].is_number() ? test_json["df"].get<double>() : std::numeric_limits<double>::infinity();
        // Power at the level the interval is read at, and the seeds a variant that would find the
        // seed's effect (without one, the Δ observed) at that level.
        const double level = alpha / double(v.comparisons);
        v.detectable = detectable_effect(v.se, v.df, level);
        test_json["detectable"] = v.detectable;
        SignificanceResult r;
        r.testable = true;
        r.paired = test_json.value("paired", false);
        r.var_sentence = test_json["var_sentence"].is_number() ? test_json["var_sentence"].get<double>() : 0.0;
        r.run_var_a = test_json.value("run_var_a", 0.0);
        r.run_var_b = test_json.value("run_var_b", 0.0);
        if (auto k = seeds_needed(r, v.expected.value_or(v.delta), level)) v.seeds_needed = *k;
        t["seeds_needed"] = v.seeds_needed ? json(*v.seeds_needed) : json(nullptr);
      }
      const json ca = e.value("converged", json()), cb = base->value("converged", json());
      v.converged = ca.is_boolean() && cb.is_boolean() && ca.get<bool>() && cb.get<bool>();
      v.lower_is_better = metric == "ppl" || metric == "ppl_word" || metric == "loss";
      if (v.testable) {
        const VerdictInterval i = verdict_interval(v);
        t["p_adjusted"] = i.p_adjusted;
        t["interval"] = {{"low", i.low}, {"high", i.high}, {"level", i.level}};
      }
      const Verdict d = decide(v);
      t["verdict"] = {{"verdict", d.verdict}, {"why", d.why}, {"decided", decided(v)}};
    }
  }
}

// [{seed, delta}] of the metric for every seed both variants have: the seed noise, in plain view.
json deltas_per_seed(const Runs& base, const Runs& var, const std::string& test, const std::string& metric) {
  json out = json::array();
  for (const RunResult* v : var) {
    const auto mv = number_at(v->metrics, {"tests", test, metric});
    for (const RunResult* b : base) {
      const auto mb = number_at(b->metrics, {"tests", test, metric});
      if (b->seed == v->seed && mv && mb) out.push_back({{"seed", v->seed}, {"delta", number(*mv - *mb)}});
    }
  }
  return out;
}

json test_entry(const Runs& runs, const Runs* base, bool is_baseline, const std::string& variant,
                const std::string& test, const ReportInput& in, int samples, LineCache* cache) {
  json t = json::object();
  for (const auto& key : metric_keys(runs, test, in.metric)) {
    t[key] = summary(values_of(runs, {"tests", test, key}));
  }
  // Δ of the report's metric, baseline mean as reference.
  const std::string delta = "delta_" + in.metric;
  t[delta] = nullptr;
  t["delta_per_seed"] = json::array();
  if (!base) {
    t.update(significance(nullptr, is_baseline, runs, variant, test, in, samples, cache));
    return t;
  }
  // Δ and its test on the seeds both have (all, in a grid of fixed seeds).
  const auto [base_used, var_used] = on_common_seeds(*base, runs);
  const double m = mean(values_of(var_used, {"tests", test, in.metric}));
  const double b = mean(values_of(base_used, {"tests", test, in.metric}));
  if (std::isfinite(m) && std::isfinite(b)) t[delta] = is_baseline ? json(0.0) : number(m - b);
  if (!is_baseline) t["delta_per_seed"] = deltas_per_seed(*base, runs, test, in.metric);
  t.update(significance(&base_used, is_baseline, var_used, variant, test, in, samples, cache));
  return t;
}

// Numbers of a whole run (not of a test set) that the report averages over seeds.
constexpr const char* kRunNumbers[] = {"params",          "emb",
                                       "red",             "tokens_per_s",
                                       "wall_s",          "updates",
                                       "grad_share_output_early", "grad_share_output_late",
                                       "emb_fraction",    "emb_fraction_closed_form"};

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
    for (const char* key : kRunNumbers) entry[key] = mean_of(runs, key);
    entry["converged"] = all_converged(runs);
    entry["runs"] = runs_json(runs);
    json t = json::object();
    for (const auto& test : tests) {
      t[test] = test_entry(runs, base_ptr, variant == in.baseline, variant, test, in, bootstrap_samples, &cache);
    }
    entry["tests"] = t;
    report.push_back(entry);
  }
  decide_all(report, tests, in.metric, in.alpha);
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

// "+0.32", "−0.11" (a real minus sign, as in the tables of the papers), never "−0.00".
std::string signed2(double v) { return signed_number(v, /*unicode_minus=*/true); }

std::string p_text(double p) { return p < 0.001 ? "<0.001" : printf_str("%.3f", p); }

bool lower_is_better(const std::string& metric) { return metric == "ppl" || metric == "ppl_word" || metric == "loss"; }

std::optional<double> get(const json& j, const std::string& key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

// One test's entry of one variant, or an empty object.
json test_of(const json& entry, const std::string& test) {
  return entry.value("tests", json::object()).value(test, json::object());
}

// "[−0.12, +0.71]" from [low, high], or "" without one.
std::string pair_text(const json& ci) {
  if (!ci.is_array() || ci.size() != 2 || !ci[0].is_number() || !ci[1].is_number()) return "";
  return "[" + signed2(ci[0].get<double>()) + ", " + signed2(ci[1].get<double>()) + "]";
}

// The interval the verdict reads (report/verdict.h), or "" without one.
std::string ci_text(const json& t) {
  const json i = t.value("interval", json());
  if (!i.is_object()) return "";
  return pair_text(json::array({i.value("low", json()), i.value("high", json())}));
}

// The level of the verdicts' intervals in a table, "97.5%", or "" when none has one.
std::string interval_level_text(const json& report, const std::vector<std::string>& tests) {
  for (const auto& e : report)
    for (const auto& test : tests) {
      const json i = test_of(e, test).value("interval", json());
      if (i.is_object() && i.contains("level")) {
        std::string s = printf_str("%.3f", 100.0 * i["level"].get<double>());
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
        return s + "%";
      }
    }
  return "";
}

// The Δ of the report's metric with its interval and p where there are: "+0.32 [−0.12, +0.71], p 0.302".
std::string delta_text(const json& t, const std::string& metric) {
  auto d = get(t, "delta_" + metric);
  if (!d) return "";
  std::string s = signed2(*d);
  if (const std::string ci = ci_text(t); !ci.empty()) s += " " + ci;
  if (auto p = get(t, "p_adjusted")) s += ", p adj. " + p_text(*p);
  return s;
}

// ------------------------------------------------------------------ tables, once for all formats

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
std::string whole(double v) { return printf_str("%.0f", v); }

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

// Text cells of one test entry per variant; the baseline's stay empty.
Column text_column(const json& report, const std::string& test, const std::string& header, bool numeric,
                   const std::function<std::string(const json& t)>& text) {
  Column c{header, 0, numeric, {}};
  for (const auto& e : report) {
    Cell cell;
    if (!e.value("baseline", false)) {
      const std::string s = text(test_of(e, test));
      if (!s.empty()) cell.text = s;
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
    auto d = get(test_of(e, test), "delta_" + metric);
    if (d && !e.value("baseline", false)) cell = {signed2(*d), *d};
    c.cells.push_back(cell);
  }
  return c;
}

Column p_column(const json& report, const std::string& test, const std::string& header, const std::string& key) {
  Column c{header, 0, true, {}};
  for (const auto& e : report) {
    Cell cell;
    if (auto p = get(test_of(e, test), key)) cell = {p_text(*p), *p};
    c.cells.push_back(cell);
  }
  return c;
}

std::string per_seed_text(const json& t) {
  std::string s;
  for (const auto& d : t.value("delta_per_seed", json::array())) {
    if (!d.contains("delta") || !d["delta"].is_number()) continue;
    s += (s.empty() ? "" : ", ") + signed2(d["delta"].get<double>()) + " (" + std::to_string(d.value("seed", 0)) + ")";
  }
  return s;
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

Column variant_column(const json& report) {
  Column name{"Variant", 0, false, {}};
  for (const auto& e : report) {
    std::string text = e.value("variant", "");
    if (e.value("baseline", false)) text += " (baseline)";
    name.cells.push_back({text, NAN});
  }
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

bool any_p(const json& report, const std::vector<std::string>& tests) {
  for (const auto& e : report)
    for (const auto& test : tests)
      if (get(test_of(e, test), "p_value")) return true;
  return false;
}

std::string seeds_text(const json& report) {
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& e : report) {
    const size_t n = e.value("seeds", size_t(0));
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
Table main_table(const json& report, const ReportInput& in, bool stacked) {
  Table t;
  std::vector<Column> cols{variant_column(report)};
  bool seeds_differ = false;
  for (const auto& e : report) seeds_differ |= e.value("seeds", 0) != report[0].value("seeds", 0);
  if (seeds_differ) cols.push_back(scalar_column(report, "Seeds", "seeds", 0, compact));
  cols.push_back(scalar_column(report, "Params", "params", -1, compact));
  cols.push_back(scalar_column(report, "Emb.", "emb", -1, compact));
  cols.push_back(scalar_column(report, "Red.", "red", 1, percent));
  const auto tests = test_names(in);
  const std::string m = metric_name(in.metric);
  auto suffix = [&](const std::string& test) { return tests.size() > 1 ? " " + test : ""; };
  std::vector<Column> deltas;
  for (const auto& test : tests) {
    Column score = metric_column(report, test, in.metric, m + " " + test);
    Column delta = text_column(report, test, "\xCE\x94 " + m + suffix(test), true,
                                [&](const json& t) { return delta_text(t, in.metric); });
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
  cols.push_back(scalar_column(report, "tok/s", "tokens_per_s", 1, compact));
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
Table test_table(const json& report, const ReportInput& in, const std::string& test) {
  Table t;
  t.heading = "Test set " + test;
  std::vector<Column> cols{variant_column(report)};
  for (const auto& k : ordered_keys(report, test, in.metric)) cols.push_back(metric_column(report, test, k, metric_name(k)));
  cols.push_back(delta_column(report, test, in.metric, "\xCE\x94 " + metric_name(in.metric)));
  cols.push_back(text_column(report, test, "interval", true, ci_text));
  cols.push_back(p_column(report, test, "p", "p_value"));
  cols.push_back(p_column(report, test, "p adj.", "p_adjusted"));
  cols.push_back(text_column(report, test, "detectable", true, [](const json& t) {
    const json d = t.value("test", json::object());
    return d.is_object() && d.contains("detectable") ? printf_str("%.2f", d["detectable"].get<double>()) : "";
  }));
  cols.push_back(text_column(report, test, "\xCE\x94 per seed (seed)", true, per_seed_text));
  cols.push_back(text_column(report, test, "sentences only: 95% CI, p", true, [](const json& t) {
    const json b = t.value("sentence_bootstrap", json());
    if (!b.is_object()) return std::string();
    return pair_text(b.value("delta_ci95", json())) + ", p " + p_text(b.value("p_value", 1.0));
  }));
  cols.push_back(text_column(report, test, "expected", true, [](const json& t) {
    return t.contains("expected") && t["expected"].is_number() ? signed2(t["expected"].get<double>()) : "";
  }));
  cols.push_back(text_column(report, test, "verdict", false, [](const json& t) {
    const json v = t.value("verdict", json());
    if (!v.is_object()) return std::string();
    return v.value("verdict", "") + ": " + v.value("why", "");
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
Table runs_table(const json& report) {
  Table t;
  t.heading = "Runs";
  Column variant{"Variant", 0, false, {}}, seed{"seed", 0, true, {}}, updates{"updates", 0, true, {}},
      stop{"stopped by", 0, false, {}}, converged{"converged", 0, false, {}};
  bool any = false;
  for (const auto& e : report)
    for (const auto& r : e.value("runs", json::array())) {
      variant.cells.push_back({e.value("variant", ""), NAN});
      seed.cells.push_back({std::to_string(r.value("seed", 0)), NAN});
      updates.cells.push_back(r["updates"].is_number() ? Cell{whole(r["updates"].get<double>()), NAN} : Cell());
      stop.cells.push_back(r["stop_reason"].is_string() ? Cell{r["stop_reason"].get<std::string>(), NAN} : Cell());
      if (r["converged"].is_boolean()) {
        any = true;
        converged.cells.push_back({std::string(r["converged"].get<bool>() ? "yes" : "no") + ": " + r.value("why", ""), NAN});
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
Table training_table(const json& report) {
  Table t;
  t.heading = "Training";
  t.columns = kept({variant_column(report), scalar_column(report, "updates", "updates", 0, whole),
                    scalar_column(report, "wall", "wall_s", -1, duration),
                    scalar_column(report, "output share of \xE2\x88\x82W, first 10%", "grad_share_output_early", 0, percent),
                    scalar_column(report, "last 10%", "grad_share_output_late", 0, percent),
                    scalar_column(report, "Emb. / Params", "emb_fraction", 0, percent),
                    scalar_column(report, "closed form", "emb_fraction_closed_form", 0, percent)});
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
Table paper_table(const json& report, const ReportInput& in) {
  Table t;
  if (in.paper.empty()) return t;
  t.heading = "Beside the seed paper" + (in.paper_source.empty() ? std::string() : " (" + in.paper_source + ")");
  Column p_params{"paper Params", 0, true, {}}, p_emb{"paper Emb.", 0, true, {}}, p_red{"paper Red.", 0, true, {}},
      p_score{"paper score", 0, true, {}};
  bool any_score = false;
  for (const auto& e : report) {
    const auto row = in.paper.find(e.value("variant", ""));
    auto field = [&](size_t i) { return row != in.paper.end() && i < row->second.size() ? Cell{row->second[i], NAN} : Cell(); };
    p_params.cells.push_back(field(0));
    p_emb.cells.push_back(field(1));
    p_red.cells.push_back(field(2));
    p_score.cells.push_back(field(3));
    any_score |= row != in.paper.end() && row->second.size() > 3;
  }
  t.columns = {variant_column(report), scalar_column(report, "Params", "params", 0, compact),
               scalar_column(report, "Emb.", "emb", 0, compact), scalar_column(report, "Red.", "red", 0, percent),
               p_params, p_emb, p_red};
  if (any_score) t.columns.push_back(p_score);
  t.legend = "Params, Emb., Red.: this experiment's models, counted; paper: the seed paper's row for the same system, "
             "as it prints it (its vocabularies and model size, not these).";
  return t;
}

std::vector<Table> report_tables(const json& report, const ReportInput& in, bool stacked) {
  std::vector<Table> tables{main_table(report, in, stacked)};
  if (Table paper = paper_table(report, in); !paper.columns.empty()) tables.push_back(std::move(paper));
  for (const auto& test : test_names(in)) tables.push_back(test_table(report, in, test));
  Table training = training_table(report);
  if (training.columns.size() > 1) tables.push_back(std::move(training));
  Table runs = runs_table(report);
  if (!runs.columns.empty()) tables.push_back(std::move(runs));
  return tables;
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

std::string html_table(const Table& t, const json& report) {
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
    const bool baseline = rows == report.size() && report[r].value("baseline", false);
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

// 12 significant digits: 35.2 rather than 35.199999999999996 (report.json keeps every bit).
std::string csv_number(const json& v) {
  if (!v.is_number()) return "";
  if (v.is_number_integer()) return v.dump();
  return printf_str("%.12g", v.get<double>());
}

std::string overrides_line(const std::vector<std::string>& overrides) {
  std::string line = "Every run with these settings in place of the grid's:";
  for (const auto& o : overrides) line += " " + o;
  return line + ".";
}

}  // namespace

std::string report_markdown(const json& report, const ReportInput& in) {
  std::string md;
  if (!in.title.empty()) md += "# " + md_escape(in.title) + "\n\n";
  if (!in.overrides.empty()) md += md_escape(overrides_line(in.overrides)) + "\n\n";
  const auto tables = report_tables(report, in, false);
  for (size_t i = 0; i < tables.size(); ++i) md += (i ? "\n" : "") + markdown_table(tables[i]);
  if (!in.provenance.empty()) {
    md += "\n";
    for (const auto& line : in.provenance) md += md_escape(line) + "  \n";
  }
  return md;
}

std::string report_csv(const json& report, const ReportInput& in) {
  std::vector<std::string> header(std::begin(kRunNumbers), std::end(kRunNumbers));
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
    std::vector<std::string> row = {e.value("variant", ""), e.value("baseline", false) ? "true" : "false",
                                    csv_number(e.value("seeds", json()))};
    for (const char* key : kRunNumbers) row.push_back(csv_number(e.value(key, json())));
    for (const auto& [test, keys] : test_keys) {
      const json t = test_of(e, test);
      for (const auto& k : keys) {
        const json s = t.value(k, json::object());
        row.push_back(csv_number(s.value("mean", json())));
        row.push_back(csv_number(s.value("std", json())));
      }
      row.push_back(csv_number(t.value("delta_" + in.metric, json())));
      const json ci = t.value("delta_ci95", json());
      row.push_back(ci.is_array() ? csv_number(ci[0]) : "");
      row.push_back(ci.is_array() ? csv_number(ci[1]) : "");
      row.push_back(csv_number(t.value("p_value", json())));
    }
    emit(row);
  }
  return out;
}

std::string report_html(const json& report, const ReportInput& in, const std::string&) {
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
  for (const auto& t : report_tables(report, in, true)) h += html_table(t, report);
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
  const json report = build_report(in);
  const json wrapped = {{"title", in.title},       {"overrides", in.overrides}, {"baseline", in.baseline},
                        {"metric", in.metric},     {"test_names", test_names(in)},
                        {"provenance", in.provenance}, {"expected", in.expected}, {"variants", report}};
  write_json(dir + "/report.json", wrapped);
  write_file_atomically(dir + "/report.md", report_markdown(report, in));
  write_file_atomically(dir + "/report.csv", report_csv(report, in));
  write_file_atomically(dir + "/report.html", report_html(report, in));
}

}  // namespace yoke
