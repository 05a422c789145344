#include "report/registered_report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "report/report_statistics.h"
#include "report/signed_number.h"
#include "report/verdict.h"

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
json interval_json(const SignificanceResult& r, double level) {
  const double q = r.se > 0 ? t_quantile(1.0 - level / 2, r.df) : 0.0;
  return {{"low", r.delta - q * r.se}, {"high", r.delta + q * r.se}, {"level", 1.0 - level}};
}

std::string interval_text(const json& i) {
  return "[" + signed_number(i.at("low").get<double>()) + ", " + signed_number(i.at("high").get<double>()) + "]";
}

}  // namespace

json registered_decision(const ReportInput& in) {
  if (!in.registration) return nullptr;
  const Registration& reg = *in.registration;
  const double level = reg.alpha / double(std::max<size_t>(1, reg.comparisons.size()));
  const bool lower = lower_is_better(in.metric);
  const Pairing registered = reg.paired ? Pairing::by_seed : Pairing::unpaired;
  const std::set<int> planned(in.registered_seeds.begin(), in.registered_seeds.end());
  LineCache cache;
  json comparisons = json::array();
  for (const auto& c : reg.comparisons) {
    const Runs all_a = runs_of(in, c.a), all_b = runs_of(in, c.b);
    // Registered paired: the seeds both have; unpaired: every run.
    const auto [a, b] = reg.paired ? common_seeds(all_a, all_b) : std::make_pair(all_a, all_b);
    json j = {{"a", c.a}, {"b", c.b}, {"claim", claim_kind_name(c.kind)}, {"margin", c.margin},
              {"seed", c.seed_effect ? json(*c.seed_effect) : json(nullptr)},
              {"seeds_a", seeds_of(a)}, {"seeds_b", seeds_of(b)}};
    auto finished = [&](const Runs& runs) {
      return size_t(std::count_if(runs.begin(), runs.end(), [&](const RunResult* r) { return planned.count(r->seed) > 0; }));
    };
    const bool interim = finished(all_a) < planned.size() || finished(all_b) < planned.size();
    j["interim"] = interim;
    j["converged"] = converged(all_a) && converged(all_b);
    // Named, in the comparison's order (B − A): "tied 2, untied 3 of the 3 registered runs".
    const std::string progress = c.b + " " + std::to_string(finished(all_b)) + ", " + c.a + " " +
                                 std::to_string(finished(all_a)) + " of the " + std::to_string(planned.size()) +
                                 " registered runs a side have finished";
    Verdict v = interim ? Verdict{"interim", progress + ": the registration reads the verdict once all have"}
                        : Verdict{"inconclusive", "a side has fewer than two runs: no seed variance to test with"};
    bool decided = false;
    if (a.size() >= 2 && b.size() >= 2) {
      const SignificanceResult r = compare_runs(a, b, reg.test, in, registered, &cache);
      if (r.testable) {
        const json i = interval_json(r, level);
        j.update({{"delta", r.delta}, {"se", r.se}, {"df", r.df}, {"p_value", r.p_value},
                  {"p_adjusted", std::min(1.0, r.p_value * double(reg.comparisons.size()))}, {"interval", i},
                  {"detectable", detectable_effect(r.se, r.df, level)}});
        const Verdict read = judge_registered(c, i["low"], i["high"], lower);
        const std::string reading = read.verdict + " (" + read.why + ")";
        if (interim)
          v = {"interim", progress + ": the registration reads the verdict once all have; now the interval would read " +
                              reading};
        else if (!j["converged"].get<bool>())
          v = {"inconclusive", "not every run of both sides converged; the interval would read " + reading};
        else {
          v = read;
          decided = read.verdict != "inconclusive";
          if (!decided)
            v.why += "; the smallest effect this test finds with 80% power is " +
                     signed_number(j["detectable"].get<double>()).substr(1);
        }
      }
      // The other pairing, at the same level: a sensitivity line, never the verdict.
      const auto [pa, pb] = reg.paired ? std::make_pair(all_a, all_b) : common_seeds(all_a, all_b);
      const std::string other = reg.paired ? "unpaired" : "paired";
      const SignificanceResult s = pa.size() >= 2 && pb.size() >= 2
                                       ? compare_runs(pa, pb, reg.test, in, reg.paired ? Pairing::unpaired : Pairing::by_seed, &cache)
                                       : SignificanceResult{};
      if (s.testable && s.paired == !reg.paired) {
        const json i = interval_json(s, level);
        const Verdict read = judge_registered(c, i["low"], i["high"], lower);
        j["sensitivity"] = {{"pairing", other}, {"seeds_a", seeds_of(pa)}, {"seeds_b", seeds_of(pb)},
                            {"delta", s.delta}, {"interval", i}, {"reading", read.verdict},
                            {"why", other + " on seeds " + std::to_string(pa.size()) + " and " + std::to_string(pb.size()) +
                                        ": Δ " + signed_number(s.delta) + ", " + interval_text(i) + ", would read " +
                                        read.verdict}};
      } else {
        j["sensitivity"] = {{"pairing", other}, {"why", other + ": fewer than two seeds both sides have"}};
      }
    }
    j["verdict"] = {{"verdict", v.verdict}, {"why", v.why}, {"decided", decided}};
    comparisons.push_back(j);
  }
  return {{"registration", registration_json(reg)},
          {"recorded", in.registration_recorded},
          {"test", reg.test},
          {"metric", in.metric},
          {"level", 1.0 - level},
          {"seeds_planned", in.registered_seeds},
          {"comparisons", comparisons}};
}

}  // namespace yoke
