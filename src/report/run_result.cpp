#include "report/run_result.h"

#include <cmath>
#include <cstdint>

#include "util/error.h"
#include "util/json_file.h"

namespace yoke {

namespace {

using nlohmann::json;

json test_json(const TestResult& t) {
  json out = json::object();
  for (const auto& [metric, value] : t.scores) out[metric] = value;
  for (const auto& [key, file] : {std::pair<const char*, const std::string*>{"hyp", &t.hyp},
                                  {"ref", &t.ref}, {"bleu_stats", &t.bleu_stats}, {"nll", &t.nll}})
    if (!file->empty()) out[key] = *file;
  if (!t.decoding.is_null()) out["decoding"] = t.decoding;
  if (!t.scoring.is_null()) out["scoring"] = t.scoring;
  return out;
}

TestResult test_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + " is not an object");
  TestResult t;
  for (const auto& [key, value] : j.items())
    if (value.is_number()) t.scores[key] = value.get<double>();  // every number of a test set is a score
  t.hyp = optional_string(j, "hyp", where).value_or("");
  t.ref = optional_string(j, "ref", where).value_or("");
  t.bleu_stats = optional_string(j, "bleu_stats", where).value_or("");
  t.nll = optional_string(j, "nll", where).value_or("");
  if (j.contains("decoding")) t.decoding = j["decoding"];
  if (j.contains("scoring")) t.scoring = j["scoring"];
  return t;
}

}  // namespace

std::optional<double> RunResult::score(const std::string& test, const std::string& metric) const {
  const auto t = tests.find(test);
  if (t == tests.end()) return std::nullopt;
  const auto s = t->second.scores.find(metric);
  if (s == t->second.scores.end()) return std::nullopt;
  return s->second;
}

json run_result_json(const RunResult& r) {
  json out = {{"variant", r.variant}, {"seed", r.seed}};
  for (const auto& f : kRunNumberFields) {
    const auto& v = r.*f.member;
    if (!v) continue;
    if (f.integral)
      out[f.key] = static_cast<int64_t>(std::llround(*v));
    else
      out[f.key] = *v;
  }
  if (!r.stop_reason.empty()) out["stop_reason"] = r.stop_reason;
  if (!r.checkpoint.empty()) out["checkpoint"] = r.checkpoint;
  json tests = json::object();
  for (const auto& [name, t] : r.tests) tests[name] = test_json(t);
  out["tests"] = tests;
  if (!r.config.is_null()) out["config"] = r.config;
  if (!r.analysis.is_null()) out["analysis"] = r.analysis;
  return out;
}

RunResult run_result_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(where + ": not a JSON object");
  RunResult r;
  r.variant = optional_string(j, "variant", where).value_or("");
  if (auto seed = optional_number(j, "seed", where)) r.seed = int(*seed);
  for (const auto& f : kRunNumberFields) r.*f.member = optional_number(j, f.key, where);
  r.stop_reason = optional_string(j, "stop_reason", where).value_or("");
  r.checkpoint = optional_string(j, "checkpoint", where).value_or("");
  if (j.contains("tests")) {
    if (!j["tests"].is_object()) throw InputError(where + ": \"tests\" is not an object");
    for (const auto& [name, t] : j["tests"].items()) r.tests[name] = test_from_json(t, where + ": tests." + name);
  }
  if (j.contains("config")) r.config = j["config"];
  if (j.contains("analysis")) r.analysis = j["analysis"];
  return r;
}

}  // namespace yoke
