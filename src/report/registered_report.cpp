#include "report/registered_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "report/report_statistics.h"
#include "report/signed_number.h"
#include "report/verdict.h"
#include "util/error.h"

namespace yoke {

using namespace report_detail;
using nlohmann::json;

namespace {

std::vector<int> seeds_of(const Runs& runs) {
  std::vector<int> out;
  for (const RunResult* r : runs) out.push_back(r->seed);
  return out;
}

// The runs of both sides whose seed the other side has too.
std::pair<Runs, Runs> common_seeds(const Runs& a, const Runs& b) {
  const std::vector<int> sa = seeds_of(a), sb = seeds_of(b);
  const std::set<int> in_a(sa.begin(), sa.end()), in_b(sb.begin(), sb.end());
  Runs ka, kb;
  for (const RunResult* r : a)
    if (in_b.count(r->seed)) ka.push_back(r);
  for (const RunResult* r : b)
    if (in_a.count(r->seed)) kb.push_back(r);
  return {ka, kb};
}

bool converged(const Runs& runs) {
  return !runs.empty() && std::all_of(runs.begin(), runs.end(), [](const RunResult* r) {
    return r->convergence && r->convergence->converged;
  });
}

// The simultaneous interval of a test at `level` (the family's: alpha / comparisons).
DecisionInterval interval_of(const SignificanceResult& r, double level) {
  const double q = r.se > 0 ? t_quantile(1.0 - level / 2, r.df) : 0.0;
  return {r.delta - q * r.se, r.delta + q * r.se, 1.0 - level};
}

std::string interval_text(const DecisionInterval& i) {
  return "[" + signed_number(i.low) + ", " + signed_number(i.high) + "]";
}

}  // namespace

std::optional<RegisteredDecision> registered_decision(const ReportInput& in) {
  if (!in.registration) return std::nullopt;
  const Registration& reg = *in.registration;
  const double level = reg.alpha / double(std::max<size_t>(1, reg.comparisons.size()));
  const bool lower = lower_is_better(in.metric);
  const Pairing registered = reg.paired ? Pairing::by_seed : Pairing::unpaired;
  const std::set<int> planned(in.registered_seeds.begin(), in.registered_seeds.end());
  LineCache cache;
  RegisteredDecision d{reg, in.registration_recorded, in.metric, 1.0 - level, in.registered_seeds, {}};
  for (const auto& c : reg.comparisons) {
    const Runs all_a = runs_of(in, c.a), all_b = runs_of(in, c.b);
    // Registered paired: the seeds both have; unpaired: every run.
    const auto [a, b] = reg.paired ? common_seeds(all_a, all_b) : std::make_pair(all_a, all_b);
    DecidedComparison j;
    j.claim = c;
    j.seeds_a = seeds_of(a);
    j.seeds_b = seeds_of(b);
    auto finished = [&](const Runs& runs) {
      return size_t(std::count_if(runs.begin(), runs.end(), [&](const RunResult* r) { return planned.count(r->seed) > 0; }));
    };
    j.interim = finished(all_a) < planned.size() || finished(all_b) < planned.size();
    j.converged = converged(all_a) && converged(all_b);
    // Named, in the comparison's order (B − A): "tied 2, untied 3 of the 3 registered runs".
    const std::string progress = c.b + " " + std::to_string(finished(all_b)) + ", " + c.a + " " +
                                 std::to_string(finished(all_a)) + " of the " + std::to_string(planned.size()) +
                                 " registered runs a side have finished";
    j.verdict = j.interim ? Verdict{"interim", progress + ": the registration reads the verdict once all have"}
                          : Verdict{"inconclusive", "a side has fewer than two runs: no seed variance to test with"};
    if (a.size() >= 2 && b.size() >= 2) {
      const SignificanceResult r = compare_runs(a, b, reg.test, in, registered, &cache);
      if (r.testable) {
        j.tested = true;
        j.delta = r.delta, j.se = r.se, j.df = r.df, j.p_value = r.p_value;
        j.p_adjusted = std::min(1.0, r.p_value * double(reg.comparisons.size()));
        j.interval = interval_of(r, level);
        j.detectable = detectable_effect(r.se, r.df, level);
        const Verdict read = judge_registered(c, j.interval.low, j.interval.high, lower);
        const std::string reading = read.verdict + " (" + read.why + ")";
        if (j.interim)
          j.verdict = {"interim", progress + ": the registration reads the verdict once all have; now the interval would read " +
                                      reading};
        else if (!j.converged)
          j.verdict = {"inconclusive", "not every run of both sides converged; the interval would read " + reading};
        else {
          j.verdict = read;
          j.decided = read.verdict != "inconclusive";
          if (!j.decided)
            j.verdict.why += "; the smallest effect this test finds with 80% power is " + signed_number(j.detectable).substr(1);
        }
      }
      // The other pairing, at the same level: a sensitivity line, never the verdict.
      const auto [pa, pb] = reg.paired ? std::make_pair(all_a, all_b) : common_seeds(all_a, all_b);
      SensitivityLine line;
      line.pairing = reg.paired ? "unpaired" : "paired";
      const SignificanceResult s = pa.size() >= 2 && pb.size() >= 2
                                       ? compare_runs(pa, pb, reg.test, in, reg.paired ? Pairing::unpaired : Pairing::by_seed, &cache)
                                       : SignificanceResult{};
      if (s.testable && s.paired == !reg.paired) {
        line.tested = true;
        line.seeds_a = seeds_of(pa);
        line.seeds_b = seeds_of(pb);
        line.delta = s.delta;
        line.interval = interval_of(s, level);
        line.reading = judge_registered(c, line.interval.low, line.interval.high, lower).verdict;
        const std::string seeds = pa.size() == pb.size()
                                      ? std::to_string(pa.size()) + " seeds a side"
                                      : std::to_string(pa.size()) + " and " + std::to_string(pb.size()) + " seeds";
        line.why = line.pairing + " on " + seeds + ": Δ " + signed_number(s.delta) + ", " + interval_text(line.interval) + ", would read " + line.reading;
      } else {
        line.why = line.pairing + ": fewer than two seeds both sides have";
      }
      j.sensitivity = line;
    }
    d.comparisons.push_back(j);
  }
  return d;
}

json to_json(const RegisteredDecision& d) {
  json comparisons = json::array();
  for (const auto& c : d.comparisons) {
    json j = comparison_json(c.claim);
    j.update({{"seeds_a", c.seeds_a}, {"seeds_b", c.seeds_b}, {"interim", c.interim}, {"converged", c.converged}});
    if (c.tested)
      j.update({{"delta", c.delta}, {"se", c.se}, {"df", c.df}, {"p_value", c.p_value}, {"p_adjusted", c.p_adjusted},
                {"interval", to_json(c.interval)}, {"detectable", c.detectable}});
    if (const auto& s = c.sensitivity) {
      if (s->tested)
        j["sensitivity"] = {{"pairing", s->pairing}, {"seeds_a", s->seeds_a}, {"seeds_b", s->seeds_b}, {"delta", s->delta},
                            {"interval", to_json(s->interval)}, {"reading", s->reading}, {"why", s->why}};
      else
        j["sensitivity"] = {{"pairing", s->pairing}, {"why", s->why}};
    }
    j["verdict"] = {{"verdict", c.verdict.verdict}, {"why", c.verdict.why}, {"decided", c.decided}};
    comparisons.push_back(j);
  }
  return {{"registration", registration_json(d.registration)},
          {"recorded", d.recorded},
          {"test", d.registration.test},
          {"metric", d.metric},
          {"level", d.level},
          {"seeds_planned", d.seeds_planned},
          {"comparisons", comparisons}};
}

namespace {

DecidedComparison comparison_decision_from_json(const json& j, const std::string& where) {
  DecidedComparison c;
  c.claim = comparison_from_json(j);
  c.seeds_a = j.at("seeds_a").get<std::vector<int>>();
  c.seeds_b = j.at("seeds_b").get<std::vector<int>>();
  c.interim = j.at("interim").get<bool>();
  c.converged = j.at("converged").get<bool>();
  c.tested = j.contains("interval");
  if (c.tested) {
    // df is infinite for a normal test, which JSON writes as null.
    c.df = j.at("df").is_number() ? j["df"].get<double>() : std::numeric_limits<double>::infinity();
    for (auto [key, field] : {std::pair{"delta", &c.delta}, {"se", &c.se}, {"p_value", &c.p_value},
                              {"p_adjusted", &c.p_adjusted}, {"detectable", &c.detectable}})
      *field = j.at(key).get<double>();
    c.interval = interval_from_json(j["interval"], where);
  }
  if (j.contains("sensitivity")) {
    const json& s = j["sensitivity"];
    SensitivityLine line;
    line.pairing = s.at("pairing").get<std::string>();
    line.why = s.at("why").get<std::string>();
    line.tested = s.contains("interval");
    if (line.tested) {
      line.seeds_a = s.at("seeds_a").get<std::vector<int>>();
      line.seeds_b = s.at("seeds_b").get<std::vector<int>>();
      line.delta = s.at("delta").get<double>();
      line.interval = interval_from_json(s["interval"], where + ": sensitivity");
      line.reading = s.at("reading").get<std::string>();
    }
    c.sensitivity = line;
  }
  const json& v = j.at("verdict");
  c.verdict = {v.at("verdict").get<std::string>(), v.at("why").get<std::string>()};
  c.decided = v.at("decided").get<bool>();
  return c;
}

}  // namespace

RegisteredDecision registered_decision_from_json(const json& j, const std::string& where) {
  try {
    RegisteredDecision d;
    d.registration = registration_from_json(j.at("registration"));
    d.recorded = j.at("recorded").get<std::string>();
    d.metric = j.at("metric").get<std::string>();
    d.level = j.at("level").get<double>();
    d.seeds_planned = j.at("seeds_planned").get<std::vector<int>>();
    for (const auto& c : j.at("comparisons")) d.comparisons.push_back(comparison_decision_from_json(c, where + ": registration"));
    return d;
  } catch (const json::exception& e) {
    throw InputError(where + ": registration: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(where + ": " + e.what());
  }
}

}  // namespace yoke
