#include "report/variant_report.h"

#include <cstdint>
#include <limits>

#include "util/error.h"
#include "util/json_file.h"

namespace yoke {

namespace {

using nlohmann::json;

// Scores, means and counts go through report_number; the numbers a test computes (p, intervals,
// standard errors) are written as they are.
json number(double v) { return report_number(v); }
json number(const std::optional<double>& v) { return v ? report_number(*v) : json(nullptr); }
json raw(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json pair_json(double low, double high) { return json::array({low, high}); }

json test_json(const ComparisonTest& t) {
  const SignificanceResult& r = t.result;
  json out = {{"method", r.sentence_part_known ? "seeds and sentences" : "seeds"},
              {"delta", r.delta},  // of the scores tested (BLEU from the sentence statistics)
              {"paired", r.paired},
              {"se", r.se},
              {"df", r.df},
              {"var_seed", r.var_seed},
              {"var_sentence", r.sentence_part_known ? json(r.var_sentence) : json(nullptr)},
              {"run_var_a", r.run_var_a},
              {"run_var_b", r.run_var_b}};
  if (t.detectable) out["detectable"] = *t.detectable;
  return out;
}

json variant_test_json(const VariantTest& t, bool baseline, const std::string& metric) {
  json out = json::object();
  for (const auto& [key, s] : t.metrics) {
    json values = json::array();
    for (double v : s.values) values.push_back(number(v));
    out[key] = {{"mean", number(s.mean)}, {"std", number(s.std)}, {"values", values}};
  }
  // The baseline's Δ is 0.0 as a float, as report.json has always had it.
  out["delta_" + metric] = !t.delta ? json(nullptr) : baseline ? json(*t.delta) : number(*t.delta);
  json per_seed = json::array();
  for (const SeedDelta& d : t.delta_per_seed) per_seed.push_back({{"seed", d.seed}, {"delta", number(d.delta)}});
  out["delta_per_seed"] = per_seed;
  out["p_value"] = raw(t.p_value);
  out["delta_ci95"] = t.delta_ci95 ? pair_json(t.delta_ci95->first, t.delta_ci95->second) : json(nullptr);
  out["test"] = t.test ? test_json(*t.test) : json(nullptr);
  out["p_seeds"] = t.p_seeds ? json{{"baseline", t.p_seeds->first}, {"variant", t.p_seeds->second}} : json(nullptr);
  out["sentence_bootstrap"] = nullptr;
  if (const auto& b = t.sentence_bootstrap)
    out["sentence_bootstrap"] = {{"delta_ci95", pair_json(b->low, b->high)}, {"p_value", b->p_value}, {"samples", b->samples}};
  out["expected"] = raw(t.expected);
  out["seeds_needed"] = t.seeds_needed ? json(*t.seeds_needed) : json(nullptr);
  if (t.p_adjusted) out["p_adjusted"] = *t.p_adjusted;
  if (t.interval) out["interval"] = to_json(*t.interval);
  if (const auto& v = t.verdict)
    out["verdict"] = {{"verdict", v->verdict.verdict}, {"why", v->verdict.why}, {"decided", v->decided}};
  return out;
}

json entry_json(const VariantEntry& e, const std::string& metric) {
  json out = {{"variant", e.variant}, {"baseline", e.baseline}, {"seeds", e.seeds.size()}, {"seed_list", e.seeds}};
  for (const auto& f : kRunNumberFields) out[f.key] = number(e.means.*f.member);
  out["converged"] = e.converged ? json(*e.converged) : json(nullptr);
  json runs = json::array();
  for (const RunLine& r : e.runs) {
    const auto& c = r.convergence;
    runs.push_back({{"seed", r.seed},
                    {"updates", number(r.updates)},
                    {"stop_reason", r.stop_reason.empty() ? json() : json(r.stop_reason)},
                    {"converged", c ? json(c->converged) : json()},
                    {"why", c ? json(c->why) : json()}});
  }
  out["runs"] = runs;
  json tests = json::object();
  for (const auto& [name, t] : e.tests) tests[name] = variant_test_json(t, e.baseline, metric);
  out["tests"] = tests;
  return out;
}

// ------------------------------------------------------------------ reading report.json back

const json& object_at(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_object())
    throw InputError(where + ": \"" + key + "\" is missing or not an object");
  return j[key];
}

double number_or_nan(const json& j, const std::string& key, const std::string& where) {
  return optional_number(j, key, where).value_or(NAN);
}

std::pair<double, double> pair_of(const json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 2 || !j[0].is_number() || !j[1].is_number())
    throw InputError(where + ": not a pair of numbers [low, high]");
  return {j[0].get<double>(), j[1].get<double>()};
}

std::vector<int> ints_of(const json& j, const std::string& where) {
  std::vector<int> out;
  if (!j.is_array()) throw InputError(where + ": not a list of seeds");
  for (const auto& v : j) {
    if (!v.is_number_integer()) throw InputError(where + ": a seed is not an integer");
    out.push_back(v.get<int>());
  }
  return out;
}

ComparisonTest comparison_test_from_json(const json& j, const std::string& where) {
  ComparisonTest t;
  SignificanceResult& r = t.result;
  r.testable = true;  // report.json holds a test only where there was one
  r.sentence_part_known = optional_string(j, "method", where).value_or("") == "seeds and sentences";
  r.delta = number_or_nan(j, "delta", where);
  r.paired = j.value("paired", false);
  r.se = number_or_nan(j, "se", where);
  r.df = optional_number(j, "df", where).value_or(std::numeric_limits<double>::infinity());
  r.var_seed = number_or_nan(j, "var_seed", where);
  r.var_sentence = optional_number(j, "var_sentence", where).value_or(0.0);  // 0 when unknown, as the test has it
  r.run_var_a = number_or_nan(j, "run_var_a", where);
  r.run_var_b = number_or_nan(j, "run_var_b", where);
  t.detectable = optional_number(j, "detectable", where);
  return t;
}

VariantTest variant_test_from_json(const json& j, const std::string& metric, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": not an object");
  VariantTest t;
  for (const auto& [key, v] : j.items()) {
    if (!v.is_object() || !v.contains("mean")) continue;  // a metric's summary is the object with a mean
    MetricSummary s;
    s.mean = number_or_nan(v, "mean", where + "." + key);
    s.std = number_or_nan(v, "std", where + "." + key);
    for (const auto& x : v.value("values", json::array())) s.values.push_back(x.is_number() ? x.get<double>() : NAN);
    t.metrics[key] = s;
  }
  t.delta = optional_number(j, "delta_" + metric, where);
  for (const auto& d : j.value("delta_per_seed", json::array()))
    t.delta_per_seed.push_back({d.value("seed", 0), number_or_nan(d, "delta", where + ".delta_per_seed")});
  t.p_value = optional_number(j, "p_value", where);
  if (j.contains("delta_ci95") && !j["delta_ci95"].is_null()) t.delta_ci95 = pair_of(j["delta_ci95"], where + ".delta_ci95");
  if (j.contains("test") && j["test"].is_object()) t.test = comparison_test_from_json(j["test"], where + ".test");
  if (j.contains("p_seeds") && j["p_seeds"].is_object())
    t.p_seeds = std::make_pair(ints_of(j["p_seeds"].value("baseline", json::array()), where + ".p_seeds.baseline"),
                               ints_of(j["p_seeds"].value("variant", json::array()), where + ".p_seeds.variant"));
  if (j.contains("sentence_bootstrap") && j["sentence_bootstrap"].is_object()) {
    const json& b = j["sentence_bootstrap"];
    const auto [low, high] = pair_of(b.value("delta_ci95", json()), where + ".sentence_bootstrap.delta_ci95");
    t.sentence_bootstrap = SentenceBootstrap{low, high, number_or_nan(b, "p_value", where), b.value("samples", 0)};
  }
  t.expected = optional_number(j, "expected", where);
  if (auto k = optional_number(j, "seeds_needed", where)) t.seeds_needed = int(*k);
  t.p_adjusted = optional_number(j, "p_adjusted", where);
  if (j.contains("interval") && j["interval"].is_object()) t.interval = interval_from_json(j["interval"], where);
  if (j.contains("verdict") && j["verdict"].is_object()) {
    const json& v = j["verdict"];
    t.verdict = VariantVerdict{{optional_string(v, "verdict", where).value_or(""), optional_string(v, "why", where).value_or("")},
                               v.value("decided", false)};
  }
  return t;
}

VariantEntry entry_from_json(const json& j, const std::string& metric, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": not an object");
  VariantEntry e;
  e.variant = optional_string(j, "variant", where).value_or("");
  e.baseline = j.value("baseline", false);
  e.seeds = ints_of(j.value("seed_list", json::array()), where + ".seed_list");
  for (const auto& f : kRunNumberFields) e.means.*f.member = optional_number(j, f.key, where);
  if (j.contains("converged") && j["converged"].is_boolean()) e.converged = j["converged"].get<bool>();
  for (const auto& r : j.value("runs", json::array())) {
    RunLine line;
    line.seed = r.value("seed", 0);
    line.updates = optional_number(r, "updates", where + ".runs");
    line.stop_reason = optional_string(r, "stop_reason", where + ".runs").value_or("");
    if (r.contains("converged") && r["converged"].is_boolean())
      line.convergence = Convergence{r["converged"].get<bool>(), optional_string(r, "why", where + ".runs").value_or("")};
    e.runs.push_back(line);
  }
  for (const auto& [name, t] : object_at(j, "tests", where).items())
    e.tests[name] = variant_test_from_json(t, metric, where + ".tests." + name);
  return e;
}

}  // namespace

json report_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<int64_t>(v);
  return v;
}

const VariantTest& VariantEntry::test(const std::string& name) const {
  static const VariantTest none;
  const auto it = tests.find(name);
  return it == tests.end() ? none : it->second;
}

json to_json(const std::vector<VariantEntry>& variants, const std::string& metric) {
  json out = json::array();
  for (const auto& e : variants) out.push_back(entry_json(e, metric));
  return out;
}

std::vector<VariantEntry> variants_from_json(const json& variants, const std::string& metric, const std::string& where) {
  if (!variants.is_array()) throw InputError(where + ": \"variants\" is not a list");
  std::vector<VariantEntry> out;
  for (size_t i = 0; i < variants.size(); ++i)
    out.push_back(entry_from_json(variants[i], metric, where + ": variants[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace yoke
