// report/variant_report: report.json's "variants", read back and written again byte for byte.
#include "report/variant_report.h"

#include "report/registered_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "util/error.h"
#include "util/json_file.h"

namespace fs = std::filesystem;

namespace {

// Every report.json of docs/results/*/, which `yoke report` rebuilds byte for byte (the Results test);
// the archive's were written by older versions and are kept as they were.
std::vector<fs::path> committed_reports() {
  std::vector<fs::path> out;
  for (const auto& d : fs::directory_iterator(fs::path(YOKE_SOURCE_DIR) / "docs/results"))
    if (d.path().filename() != "archive" && fs::exists(d.path() / "report.json")) out.push_back(d.path() / "report.json");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// The one mapping keeps every number as report.json has it: dump() tells 0 from 0.0 and null from
// a missing key, which json's == does not.
TEST(VariantReport, EveryCommittedReportReadsBackAndWritesTheSameBytes) {
  const auto files = committed_reports();
  ASSERT_GE(files.size(), 10u) << "docs/results holds the committed reports";
  for (const auto& path : files) {
    const nlohmann::json j = yoke::read_json(path.string());
    const std::string metric = j.value("metric", "bleu");
    const auto variants = yoke::variants_from_json(j.at("variants"), metric, path.string());
    EXPECT_EQ(variants.size(), j.at("variants").size()) << path;
    EXPECT_EQ(yoke::to_json(variants, metric).dump(2), j.at("variants").dump(2)) << path;
  }
}

// The fields, as the tables read them, from one committed registered report (seed 004's
// non-inferiority grid: a perplexity metric, a verdict and an interval on each comparison).
TEST(VariantReport, FieldsHoldWhatTheJsonSays) {
  const fs::path path = fs::path(YOKE_SOURCE_DIR) / "docs/results/seed004-lm-noninferiority-cpu/report.json";
  const nlohmann::json j = yoke::read_json(path.string());
  const std::string metric = j.at("metric");
  ASSERT_EQ(metric, "ppl");
  const auto variants = yoke::variants_from_json(j.at("variants"), metric, path.string());
  for (size_t i = 0; i < variants.size(); ++i) {
    const yoke::VariantEntry& e = variants[i];
    const nlohmann::json& je = j["variants"][i];
    EXPECT_EQ(e.variant, je.at("variant"));
    EXPECT_EQ(e.baseline, je.at("baseline").get<bool>());
    EXPECT_EQ(e.seeds.size(), je.at("seeds").get<size_t>());
    EXPECT_EQ(e.runs.size(), e.seeds.size());
    ASSERT_TRUE(e.means.params.has_value());
    EXPECT_EQ(*e.means.params, je.at("params").get<double>());
    for (const auto& [name, jt] : je.at("tests").items()) {
      const yoke::VariantTest& t = e.test(name);
      ASSERT_EQ(t.metrics.count("ppl"), 1u) << name;
      EXPECT_EQ(t.metrics.at("ppl").mean, jt["ppl"]["mean"].get<double>());
      EXPECT_EQ(t.metrics.at("ppl").values.size(), jt["ppl"]["values"].size());
      EXPECT_EQ(t.delta.has_value(), jt["delta_ppl"].is_number());
      EXPECT_EQ(t.verdict.has_value(), !e.baseline) << "every comparison has a verdict, the baseline none";
      EXPECT_EQ(t.p_value.has_value(), t.test.has_value());
      if (t.interval) {
        EXPECT_LE(t.interval->low, t.interval->high);
        EXPECT_EQ(t.interval->level, jt["interval"]["level"].get<double>());
      }
    }
  }
  // A test set no variant has reads as an empty entry.
  EXPECT_TRUE(variants.front().test("no-such-test").metrics.empty());
}

TEST(VariantReport, AMalformedEntryNamesTheFileAndTheEntry) {
  const auto j = nlohmann::json::parse(R"([{"variant": "a", "seed_list": [1], "tests": {}},
                                           {"variant": "b", "seed_list": "one", "tests": {}}])");
  try {
    yoke::variants_from_json(j, "bleu", "exp/report.json");
    FAIL() << "a list of seeds that is not one is an error";
  } catch (const yoke::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exp/report.json: variants[1].seed_list"), std::string::npos) << e.what();
  }
  const auto no_tests = nlohmann::json::parse(R"([{"variant": "a", "seed_list": [1]}])");
  EXPECT_THROW(yoke::variants_from_json(no_tests, "bleu", "r.json"), yoke::InputError);
  EXPECT_THROW(yoke::variants_from_json(nlohmann::json::object(), "bleu", "r.json"), yoke::InputError);
}

// A registered report's decision reads back into the fields it was written from, and writes the
// same bytes again (`yoke report --verdicts` prints from these fields).
TEST(VariantReport, EveryCommittedRegisteredDecisionReadsBackAndWritesTheSameBytes) {
  int registered = 0;
  for (const auto& path : committed_reports()) {
    const nlohmann::json j = yoke::read_json(path.string());
    if (!j.contains("registration")) continue;
    ++registered;
    const yoke::RegisteredDecision d = yoke::registered_decision_from_json(j["registration"], path.string());
    EXPECT_FALSE(d.comparisons.empty()) << path;
    EXPECT_EQ(yoke::to_json(d).dump(2), j["registration"].dump(2)) << path;
  }
  EXPECT_GE(registered, 2) << "seed003-decide-registered-cpu and seed004-lm-noninferiority-cpu are registered";
  nlohmann::json broken = yoke::read_json(
      (fs::path(YOKE_SOURCE_DIR) / "docs/results/seed004-lm-noninferiority-cpu/report.json").string())["registration"];
  broken["comparisons"][0].erase("verdict");
  try {
    yoke::registered_decision_from_json(broken, "exp/report.json");
    FAIL() << "a comparison without its verdict is an error";
  } catch (const yoke::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exp/report.json: registration:"), std::string::npos) << e.what();
  }
}
