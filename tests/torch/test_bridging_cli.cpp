// A direct-bridging model (bridging = direct) through the command line as a user runs it: the
// term in the log and metrics.jsonl, W in the parameter count and the checkpoint, an exact
// resume, and the model's way out through averaging, int8, export and import.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "store/checkpoint.h"
#include "util/json_file.h"

using namespace yoke;
using namespace yoke::test;

namespace {

std::vector<std::string> bridging_args(const fs::path& save, int updates) {
  auto a = tiny_train_args(save, updates, 4);
  a.insert(a.end(), {"--tie", "none", "--bridging", "direct", "--bridging_weight", "0.5"});
  return a;
}

std::vector<nlohmann::json> records(const fs::path& metrics, const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& line : lines_of(slurp(metrics)))
    if (auto j = nlohmann::json::parse(line); j.at("type") == type) out.push_back(j);
  return out;
}

}  // namespace

TEST(BridgingCli, TrainsLogsTheTermAndResumesExactly) {
  const auto straight = work_dir() / "bridging_straight", resumed = work_dir() / "bridging_resumed";
  const auto log = work_dir() / "bridging_straight.log";
  ASSERT_EQ(run(bridging_args(straight, 30), log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("bridging direct, weight 0.5"), std::string::npos) << slurp(log);

  // Every training record carries the term per token and its weighted share of the loss.
  const auto train = records(straight / "metrics.jsonl", "train");
  ASSERT_FALSE(train.empty());
  for (const auto& r : train) {
    EXPECT_GT(r.at("bridge").get<double>(), 0.0);
    const double share = r.at("bridge_share").get<double>();
    EXPECT_GT(share, 0.0);
    EXPECT_LT(share, 1.0);
  }
  // W (d×d = 32×32) is a parameter of the model, outside the word matrices (Emb.).
  const auto start = records(straight / "metrics.jsonl", "start").at(0);
  const auto plain_log = work_dir() / "bridging_plain.log";
  auto plain = tiny_train_args(work_dir() / "bridging_plain", 1, 4);
  plain.insert(plain.end(), {"--tie", "none"});
  ASSERT_EQ(run(plain, plain_log), 0) << slurp(plain_log);
  const auto plain_start = records(work_dir() / "bridging_plain" / "metrics.jsonl", "start").at(0);
  EXPECT_EQ(start.at("params").get<int64_t>() - plain_start.at("params").get<int64_t>(), 32 * 32);
  EXPECT_EQ(start.at("emb"), plain_start.at("emb"));

  // Interrupted at 12 updates and resumed to 30: the same weights, W included, bit for bit (the
  // same code path on the same machine).
  ASSERT_EQ(run(bridging_args(resumed, 12), work_dir() / "bridging_resumed1.log"), 0);
  ASSERT_EQ(run(bridging_args(resumed, 30), work_dir() / "bridging_resumed2.log"), 0)
      << slurp(work_dir() / "bridging_resumed2.log");
  const auto a = model_weights(load_checkpoint((straight / "checkpoint_last.ykp").string()));
  const auto b = model_weights(load_checkpoint((resumed / "checkpoint_last.ykp").string()));
  ASSERT_TRUE(a.count("bridge.weight"));
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [k, t] : a) EXPECT_TRUE(at::equal(t, b.at(k))) << k;

  // Decoding does not use W; averaging, int8, export and import carry the model as any other.
  const auto input = (data_dir() / "test.toy.src.txt").string();
  const auto translated = output_of({YOKE_BINARY, "translate", "--model", straight.string(), "--input", input,
                                     "--threads", "1", "--beam", "2"});
  EXPECT_FALSE(translated.empty());
  const auto out_log = work_dir() / "bridging_tools.log";
  ASSERT_EQ(run({YOKE_BINARY, "average", "--model", straight.string(), "--last", "2"}, out_log), 0) << slurp(out_log);
  ASSERT_EQ(run({YOKE_BINARY, "quantize", "--model", straight.string(), "--out", (work_dir() / "bridging_int8").string()},
                out_log), 0)
      << slurp(out_log);
  const auto exported = work_dir() / "bridging_export", imported = work_dir() / "bridging_import";
  ASSERT_EQ(run({YOKE_BINARY, "export", "--model", straight.string(), "--out", exported.string()}, out_log), 0)
      << slurp(out_log);
  ASSERT_EQ(run({YOKE_BINARY, "import", "--model", exported.string(), "--out", imported.string()}, out_log), 0)
      << slurp(out_log);
  EXPECT_EQ(output_of({YOKE_BINARY, "translate", "--model", imported.string(), "--input", input, "--threads", "1",
                       "--beam", "2"}),
            translated);
}

TEST(BridgingCli, RefusesATiedMatrixWithTheReason) {
  const auto log = work_dir() / "bridging_all.log";
  auto args = tiny_train_args(work_dir() / "bridging_all", 1, 4);
  args.insert(args.end(), {"--tie", "all", "--bridging", "direct"});
  EXPECT_EQ(run(args, log), 2);
  EXPECT_NE(slurp(log).find("bridging = direct is defined for separate source and target embeddings"), std::string::npos)
      << slurp(log);
}
