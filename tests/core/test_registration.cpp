// Registered decisions (report/registration.h, report/registered_report.h): what a grid may
// register, the margin rule that reads each claim (report/verdict.h, judge_registered), and the
// report's reading of a registered grid's runs: the registered pairing, one simultaneous level,
// interim until every registered run has finished, the other pairing as a sensitivity line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/significance.h"
#include "report/registered_report.h"
#include "report/registration.h"
#include "report/report.h"
#include "report/verdict.h"

namespace yoke {
namespace {

TEST(Registration, ParsesComparisonsAndRefusesClaimsThatCouldNotBeContradicted) {
  const RegisteredComparison c = parse_registered_comparison("shared-private - vanilla: better, seed +0.44, margin 0.22", false);
  EXPECT_EQ(c.b, "shared-private");
  EXPECT_EQ(c.a, "vanilla");
  EXPECT_EQ(c.kind, ClaimKind::better);
  EXPECT_DOUBLE_EQ(*c.seed_effect, 0.44);
  EXPECT_DOUBLE_EQ(c.margin, 0.22);
  const RegisteredComparison n = parse_registered_comparison("tied - untied: not worse, margin 1", true);
  EXPECT_EQ(n.kind, ClaimKind::not_worse);
  EXPECT_FALSE(n.seed_effect);
  // Perplexity: "better" is a lower B, so the seed's Δ must be negative.
  EXPECT_EQ(parse_registered_comparison("tied - untied: better, seed -0.5, margin 0.2", true).kind, ClaimKind::better);
  auto refused = [](const std::string& value, bool lower, const std::string& says) {
    try {
      parse_registered_comparison(value, lower);
      ADD_FAILURE() << "accepted: " << value;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("b-a: better, seed 1, margin 0.5", false, "spaces around '-'");
  refused("b - a: better, seed 1", false, "declares no margin");
  refused("b - a: better, margin 0.5", false, "needs the seed's effect");
  refused("b - a: better, seed -1, margin 0.5", false, "does not say 'better'");
  refused("b - a: better, seed +1, margin 0.5", true, "does not say 'better'");
  refused("b - a: worse, seed -0.1, margin 0.2", false, "exceeds the seed's own effect");
  refused("b - a: equivalent, margin 0", false, "needs a margin above 0");
  refused("b - a: larger, seed 1, margin 0.5", false, "not one of");
  refused("b - a: better, seed 1, width 0.5", false, "neither");
  refused("a - a: better, seed 1, margin 0.5", false, "two different variants");
}

TEST(Registration, ProblemsNameWhatIsMissing) {
  Registration r;
  r.question = "q";
  r.metric = "bleu";
  r.test = "decide";
  r.pairing_why = "why";
  r.seed_plan = "plan";
  r.stopping = "stop";
  r.comparisons = {parse_registered_comparison("b - a: better, seed 1, margin 0.5", false)};
  EXPECT_FALSE(registration_problem(r, {"a", "b"}, "bleu"));
  EXPECT_NE(registration_problem(r, {"a", "b"}, "ppl")->find("metric = bleu"), std::string::npos);
  EXPECT_NE(registration_problem(r, {"a", "c"}, "bleu")->find("names 'b'"), std::string::npos);
  r.comparisons.push_back(parse_registered_comparison("a - b: worse, seed -1, margin 0.5", false));
  EXPECT_NE(registration_problem(r, {"a", "b"}, "bleu")->find("registered twice"), std::string::npos);
  r.comparisons.pop_back();
  r.seed_plan.clear();
  EXPECT_NE(registration_problem(r, {"a", "b"}, "bleu")->find("seed_plan"), std::string::npos);
  // The JSON form reads back as it was written.
  r.seed_plan = "plan";
  const Registration back = registration_from_json(registration_json(r));
  EXPECT_EQ(registration_json(back), registration_json(r));
}

TEST(Registration, TheMarginRuleReadsEachKindOfClaim) {
  const auto better = parse_registered_comparison("b - a: better, seed +0.44, margin 0.22", false);
  EXPECT_EQ(judge_registered(better, 0.1, 2.0, false).verdict, "reproduced");
  EXPECT_NE(judge_registered(better, 0.5, 2.0, false).why.find("larger than the seed's"), std::string::npos);
  EXPECT_EQ(judge_registered(better, -1.0, -0.1, false).verdict, "contradicted");    // the other direction
  EXPECT_EQ(judge_registered(better, -0.5, 0.2, false).verdict, "contradicted");     // no gain of 0.22
  EXPECT_EQ(judge_registered(better, -0.5, 0.3, false).verdict, "inconclusive");     // holds 0 and 0.22
  EXPECT_EQ(judge_registered(better, -0.5, 0.22, false).verdict, "inconclusive");    // the margin itself is held
  // "worse" mirrors it: decoder WT's −0.11 with margin 0.05.
  const auto worse = parse_registered_comparison("b - a: worse, seed -0.11, margin 0.05", false);
  EXPECT_EQ(judge_registered(worse, -2.0, -0.1, false).verdict, "reproduced");
  EXPECT_EQ(judge_registered(worse, -0.04, 3.0, false).verdict, "contradicted");
  EXPECT_EQ(judge_registered(worse, -0.06, 3.0, false).verdict, "inconclusive");
  // Perplexity, lower is better: B better by 1 to 3 points is Δ in [−3, −1].
  const auto ppl = parse_registered_comparison("b - a: better, seed -2, margin 0.5", true);
  EXPECT_EQ(judge_registered(ppl, -3.0, -1.0, true).verdict, "reproduced");
  EXPECT_EQ(judge_registered(ppl, 1.0, 3.0, true).verdict, "contradicted");
  // Non-inferiority with a margin of 1 perplexity point: B may be worse by less than 1.
  const auto ni = parse_registered_comparison("b - a: not worse, margin 1", true);
  EXPECT_EQ(judge_registered(ni, -0.3, 0.9, true).verdict, "reproduced");
  EXPECT_EQ(judge_registered(ni, -0.3, 1.1, true).verdict, "inconclusive");
  EXPECT_EQ(judge_registered(ni, 1.2, 2.0, true).verdict, "contradicted");
  // Equivalence: within ±m, beyond it, or across it.
  const auto eq = parse_registered_comparison("b - a: equivalent, margin 0.5", false);
  EXPECT_EQ(judge_registered(eq, -0.4, 0.4, false).verdict, "reproduced");
  EXPECT_EQ(judge_registered(eq, 0.6, 1.4, false).verdict, "contradicted");
  EXPECT_EQ(judge_registered(eq, 0.2, 1.4, false).verdict, "inconclusive");
}

// Perplexities of seeds 1..k, without per-line NLL: the test is the seeds' part alone.
RunResult run(const std::string& variant, int seed, double ppl, bool converged = true) {
  RunResult r;
  r.variant = variant;
  r.seed = seed;
  r.tests["decide"].scores["ppl"] = ppl;
  r.convergence = Convergence{converged, converged ? "early stopping" : "still falling"};
  return r;
}

ReportInput registered_input() {
  ReportInput in;
  in.title = "registered";
  in.metric = "ppl";
  in.baseline = "untied";
  in.variant_order = {"untied", "tied"};
  in.test_names = {"decide"};
  Registration reg;
  reg.question = "Does a tied LM match the untied one?";
  reg.metric = "ppl";
  reg.test = "decide";
  reg.pairing_why = "shapes differ";
  reg.seed_plan = "3 seeds";
  reg.stopping = "early stopping";
  reg.comparisons = {parse_registered_comparison("tied - untied: not worse, margin 3", true)};
  in.registration = reg;
  in.registered_seeds = {1, 2, 3};
  in.registration_recorded = "2026-11-27 08:00:00 UTC, yoke abc";
  const double untied[] = {30.0, 31.0, 32.0}, tied[] = {32.0, 33.5, 34.0};
  for (int s = 1; s <= 3; ++s) {
    in.runs.push_back(run("untied", s, untied[s - 1]));
    in.runs.push_back(run("tied", s, tied[s - 1]));
  }
  return in;
}

TEST(RegisteredReport, ReadsTheRegistrationWithItsPairingAndLevelAndTheOtherPairingBeside) {
  ReportInput in = registered_input();
  const auto d = registered_decision(in);
  ASSERT_TRUE(d.has_value());
  ASSERT_EQ(d->comparisons.size(), 1u);
  const DecidedComparison& c = d->comparisons[0];
  ASSERT_TRUE(c.tested);
  // Welch on 3 + 3 runs: Δ = 33.1667 − 31 = 2.1667; s² = 1 and 1.0833, SE² = 1/3 + 1.0833/3 = 0.6944,
  // df = 0.6944² / ((1/3)² / 2 + (1.0833/3)² / 2) = 3.9935 (a paired test would have 2).
  EXPECT_NEAR(c.delta, 2.16667, 1e-4);
  EXPECT_NEAR(c.se, std::sqrt(0.69444), 1e-4);
  EXPECT_NEAR(c.df, 3.9935, 1e-3);
  // One comparison: the 95% interval, t(0.975, 3.9935) = 2.7785.
  EXPECT_NEAR(c.interval.level, 0.95, 1e-12);
  EXPECT_NEAR(c.interval.high, c.delta + t_quantile(0.975, c.df) * c.se, 1e-9);
  // [−0.15, +4.48] reaches past the margin of 3: inconclusive, with the floor the test had.
  EXPECT_EQ(c.verdict.verdict, "inconclusive");
  EXPECT_NE(c.verdict.why.find("smallest effect"), std::string::npos);
  EXPECT_FALSE(c.decided);
  // The other pairing, paired on seeds 1–3: Δ per seed 2, 2.5, 2 — a narrower interval, a line only.
  ASSERT_TRUE(c.sensitivity.has_value());
  EXPECT_EQ(c.sensitivity->pairing, "paired");
  EXPECT_TRUE(c.sensitivity->tested);
  EXPECT_NE(c.sensitivity->why.find("would read reproduced"), std::string::npos) << c.sensitivity->why;

  // report.json's mapping (to_json): the same numbers under their keys, copied, not computed.
  const nlohmann::json j = to_json(*d);
  EXPECT_EQ(j.at("test"), "decide");
  EXPECT_EQ(j.at("level").get<double>(), d->level);
  const auto& jc = j.at("comparisons").at(0);
  EXPECT_EQ(jc.at("interval").at("high").get<double>(), c.interval.high);
  EXPECT_EQ(jc.at("verdict").at("verdict"), "inconclusive");
  EXPECT_EQ(jc.at("sensitivity").at("pairing"), "paired");
  EXPECT_EQ(jc.at("claim"), "not worse");

  // The main table takes the registered verdict and interval for the registered comparison.
  const std::vector<VariantEntry> entries = build_report(in, 0, &*d);
  bool found = false;
  for (const VariantEntry& e : entries)
    if (e.variant == "tied") {
      found = true;
      const VariantTest& t = e.test("decide");
      ASSERT_TRUE(t.verdict && t.interval && t.test);
      EXPECT_EQ(t.verdict->verdict.verdict, "inconclusive");
      EXPECT_NEAR(t.interval->high, c.interval.high, 1e-12);
      EXPECT_FALSE(t.test->result.paired);
    }
  EXPECT_TRUE(found);
  const std::string md = report_markdown(entries, in, &*d);
  EXPECT_NE(md.find("## Registered decision"), std::string::npos);
  EXPECT_NE(md.find("Registered 2026-11-27 08:00:00 UTC, yoke abc"), std::string::npos);
  EXPECT_NE(md.find("Pairing: unpaired (shapes differ)"), std::string::npos);
  EXPECT_NE(md.find("interval: 95%, simultaneous over the 1 registered"), std::string::npos);
}

TEST(RegisteredReport, NoVerdictBeforeEveryRegisteredRunFinishedNorFromUnconvergedRuns) {
  ReportInput in = registered_input();
  in.runs.pop_back();  // tied seed 3 has not finished
  DecidedComparison c = registered_decision(in)->comparisons.at(0);
  EXPECT_TRUE(c.interim);
  EXPECT_EQ(c.verdict.verdict, "interim");
  EXPECT_NE(c.verdict.why.find("tied 2, untied 3 of the 3 registered runs"), std::string::npos) << c.verdict.why;
  // One tied run: nothing to test yet, and still interim, not inconclusive.
  in.runs.erase(std::remove_if(in.runs.begin(), in.runs.end(),
                               [](const RunResult& r) { return r.variant == "tied" && r.seed == 2; }),
                in.runs.end());
  c = registered_decision(in)->comparisons.at(0);
  EXPECT_EQ(c.verdict.verdict, "interim");
  EXPECT_FALSE(c.tested);
  EXPECT_FALSE(to_json(*registered_decision(in)).at("comparisons").at(0).contains("interval"));  // nothing tested
  EXPECT_NE(c.verdict.why.find("tied 1, untied 3 of the 3"), std::string::npos) << c.verdict.why;

  in = registered_input();
  // A clear non-inferiority now: tied within a point of untied in every seed.
  for (auto& r : in.runs)
    if (r.variant == "tied") r.tests["decide"].scores["ppl"] = 30.2 + 0.9 * (r.seed - 1);
  EXPECT_EQ(registered_decision(in)->comparisons.at(0).verdict.verdict, "reproduced");
  in.runs[0].convergence = Convergence{false, "still falling"};
  c = registered_decision(in)->comparisons.at(0);
  EXPECT_EQ(c.verdict.verdict, "inconclusive");
  EXPECT_NE(c.verdict.why.find("would read reproduced"), std::string::npos);
  // Without a registration there is no decision.
  in.registration.reset();
  EXPECT_FALSE(registered_decision(in).has_value());
}

}  // namespace
}  // namespace yoke
