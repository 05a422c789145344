// `yoke analyze` end to end on two tiny translation models of one joint vocabulary (tie all and
// tie none): analysis.json's "sphere" (analysis/sphere_uniformity.h) and "against"
// (analysis/matrix_resemblance.h), what is printed, and the refusal of models given the wrong
// way round.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace fs = std::filesystem;
using namespace yoke;

namespace {

fs::path tiny_model_with_tie(const std::string& tie) {
  return test::train_into("resemblance_" + tie, [&](const fs::path& dir) {
    auto args = test::tiny_train_args(dir, 10, 5);
    args.insert(args.end(), {"--tie", tie});
    return args;
  });
}

}  // namespace

// Two tiny translation models on one joint vocabulary: tie all against tie none writes "against"
// and "sphere" into analysis.json; the roles given the wrong way round are refused with a message.
TEST(AnalyzeCli, AgainstAnUntiedModelAndSphereStatistics) {
  static const fs::path tied = tiny_model_with_tie("all"), untied = tiny_model_with_tie("none");
  const fs::path out = test::work_dir() / "resemblance_analysis";
  const std::string printed = test::output_of({YOKE_BINARY, "analyze", "--model", tied.string(), "--against",
                                               untied.string(), "--out", out.string(), "--pairs", "5000",
                                               "--knn-words", "50", "--threads", "1"});
  EXPECT_NE(printed.find("against"), std::string::npos) << printed;
  EXPECT_NE(printed.find("sphere"), std::string::npos) << printed;
  const auto j = nlohmann::json::parse(test::slurp(out / "analysis.json"));
  ASSERT_TRUE(j.contains("against")) << j.dump(2);
  const auto& a = j["against"];
  EXPECT_EQ(a["model"], untied.string());
  EXPECT_EQ(a["pairs"], 5000);
  EXPECT_EQ(a["knn_words"], 50);
  EXPECT_EQ(a["words"].get<int64_t>() + 4, 200);  // the data's vocabulary less the 4 specials
  for (const char* key : {"spearman_input", "spearman_output", "knn10_input", "knn10_output", "cka_input", "cka_output"})
    EXPECT_TRUE(a[key].is_number()) << key;
  ASSERT_TRUE(j["sphere"].contains("shared (source=target=output)")) << j["sphere"].dump(2);
  EXPECT_EQ(j["sphere"]["shared (source=target=output)"]["pair_cosine"]["pairs"], 5000);

  const fs::path log = test::work_dir() / "resemblance_refused.log";
  EXPECT_NE(test::run({YOKE_BINARY, "analyze", "--model", untied.string(), "--against", tied.string(), "--out",
                       (test::work_dir() / "refused").string(), "--threads", "1"},
                      log),
            0);
  EXPECT_NE(test::slurp(log).find("has tie none"), std::string::npos) << test::slurp(log);
  EXPECT_FALSE(fs::exists(test::work_dir() / "refused"));  // refused before anything is written
}
