// The `yoke` command end to end on tiny data: train, interrupt (SIGKILL and Ctrl-C), resume
// exactly, translate, average, score.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "store/checkpoint.h"
#include "margin.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

std::vector<std::string> train_args(const fs::path& save_dir, int max_updates) {
  return tiny_train_args(save_dir, max_updates, 3);
}

std::map<std::string, at::Tensor> weights(const fs::path& ckpt) { return model_weights(load_checkpoint(ckpt.string())); }

int64_t checkpoint_update(const fs::path& ckpt) {
  return load_checkpoint(ckpt.string()).meta.at("state").at("update").get<int64_t>();
}

void expect_same_weights(const fs::path& a, const fs::path& b) {
  auto wa = weights(a), wb = weights(b);
  ASSERT_EQ(wa.size(), wb.size());
  for (auto& [k, t] : wa) EXPECT_TRUE(at::equal(t, wb.at(k))) << k;
}

}  // namespace

TEST(TrainCli, SigkillAndResumeGivesTheSameParameters) {
  const auto straight = work_dir() / "straight", killed = work_dir() / "killed";
  ASSERT_EQ(run(train_args(straight, 60), work_dir() / "straight.log"), 0) << slurp(work_dir() / "straight.log");
  ASSERT_EQ(checkpoint_update(straight / "checkpoint_last.ykp"), 60);

  pid_t pid = spawn(train_args(killed, 60), work_dir() / "killed1.log");
  // Wait for a checkpoint past update 20, then kill without warning.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(killed / "checkpoint_u20.ykp")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  wait_child(pid, &status, 0);
  ASSERT_TRUE(fs::exists(killed / "checkpoint_last.ykp"));
  const int64_t at_kill = checkpoint_update(killed / "checkpoint_last.ykp");
  EXPECT_LT(at_kill, 60) << "the run finished before it was killed; the test proves nothing";

  ASSERT_EQ(run(train_args(killed, 60), work_dir() / "killed2.log"), 0) << slurp(work_dir() / "killed2.log");
  EXPECT_NE(slurp(work_dir() / "killed2.log").find("resumed from"), std::string::npos);
  EXPECT_EQ(checkpoint_update(killed / "checkpoint_last.ykp"), 60);
  expect_same_weights(straight / "checkpoint_last.ykp", killed / "checkpoint_last.ykp");
}

TEST(TrainCli, CtrlCSavesAndResumes) {
  const auto dir = work_dir() / "ctrlc";
  pid_t pid = spawn(train_args(dir, 100000), work_dir() / "ctrlc.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && !fs::exists(dir / "checkpoint_u10.ykp"))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGINT);
  int status = 0;
  wait_child(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const auto log = slurp(work_dir() / "ctrlc.log");
  EXPECT_NE(log.find("interrupted: saved"), std::string::npos) << log;
  auto ckpt = load_checkpoint((dir / "checkpoint_last.ykp").string());
  EXPECT_EQ(ckpt.meta.at("reason"), "interrupt");
  const int64_t saved = ckpt.meta.at("state").at("update");
  EXPECT_GE(saved, 10);
  // Resuming continues from there.
  auto args = train_args(dir, int(saved) + 5);
  ASSERT_EQ(run(args, work_dir() / "ctrlc2.log"), 0);
  EXPECT_EQ(checkpoint_update(dir / "checkpoint_last.ykp"), saved + 5);
}

TEST(TrainCli, MetricsTranslateAverageScore) {
  const auto dir = work_dir() / "full";
  ASSERT_EQ(run(train_args(dir, 40), work_dir() / "full.log"), 0) << slurp(work_dir() / "full.log");
  // metrics.jsonl: a start line with the accounting, train and valid lines.
  std::ifstream metrics(dir / "metrics.jsonl");
  std::string line;
  std::set<std::string> types;
  while (std::getline(metrics, line)) {
    auto j = nlohmann::json::parse(line);
    types.insert(j.at("type").get<std::string>());
    if (j["type"] == "start") {
      EXPECT_GT(j.at("params").get<int64_t>(), 0);
      EXPECT_GT(j.at("emb").get<int64_t>(), 0);
      YOKE_EXPECT_NEAR(j.at("red").get<double>(), 1.0 / 3, 1e-9);  // default tie = decoder, joint vocabulary
    }
  }
  EXPECT_TRUE(types.count("start") && types.count("train") && types.count("valid") && types.count("end"));

  ASSERT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "3"}, work_dir() / "avg.log"), 0)
      << slurp(work_dir() / "avg.log");
  auto avg = weights(dir / "checkpoint_avg.ykp");
  auto a = weights(dir / "checkpoint_u20.ykp"), b = weights(dir / "checkpoint_u30.ykp"), c = weights(dir / "checkpoint_u40.ykp");
  for (auto& [k, t] : avg) YOKE_EXPECT_CLOSE(t, (a.at(k) + b.at(k) + c.at(k)) / 3, 1e-5, 1e-6) << k;

  const auto src = data_dir() / "test.toy.src.txt", ref = data_dir() / "test.toy.tgt.txt";
  const auto hyp = work_dir() / "test.hyp";
  ASSERT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input", src.string(), "--output", hyp.string(),
                 "--beam", "3"}, work_dir() / "translate.log"), 0)
      << slurp(work_dir() / "translate.log");
  std::ifstream hs(hyp), rs(src);
  size_t nh = 0, nr = 0;
  for (std::string l; std::getline(hs, l);) ++nh;
  for (std::string l; std::getline(rs, l);) ++nr;
  EXPECT_EQ(nh, nr);

  auto j = nlohmann::json::parse(output_of({YOKE_BINARY, "score", "--hyp", hyp.string(), "--ref", ref.string(), "--json"}));
  for (const char* k : {"bleu", "chrf", "chrf_pp", "precisions", "bp", "sys_len", "ref_len"}) EXPECT_TRUE(j.contains(k)) << k;
}

TEST(TrainCli, ErrorsNameTheFileAndLine) {
  const auto conf = work_dir() / "bad.conf";
  std::ofstream(conf) << "d_model = 32\n# comment\nheads = two\n";
  ASSERT_EQ(run({YOKE_BINARY, "train", "--config", conf.string()}, work_dir() / "bad.log"), 2);
  EXPECT_NE(slurp(work_dir() / "bad.log").find("heads = two: expected a whole number — " + conf.string() + " line 3"),
            std::string::npos)
      << slurp(work_dir() / "bad.log");
  std::ofstream(conf) << "d_modle = 32\n";
  ASSERT_EQ(run({YOKE_BINARY, "train", "--config", conf.string()}, work_dir() / "bad.log"), 2);
  EXPECT_NE(slurp(work_dir() / "bad.log").find("did you mean 'd_model'"), std::string::npos) << slurp(work_dir() / "bad.log");
}

// A sentence longer than the position table is found before training starts, not when its batch
// comes up (an internal error with a backtrace, mid-run, before).
TEST(TrainCli, SequencesLongerThanMaxPositionsAreRefusedAtStart) {
  auto args = tiny_train_args(work_dir() / "short-positions", 5, 1);
  args.insert(args.end(), {"--set", "max_positions=4"});
  ASSERT_EQ(run(args, work_dir() / "short-positions.log"), 2) << slurp(work_dir() / "short-positions.log");
  const std::string log = slurp(work_dir() / "short-positions.log");
  EXPECT_NE(log.find("train.bin: sequence "), std::string::npos) << log;
  EXPECT_NE(log.find("more than max_positions = 4"), std::string::npos) << log;
  EXPECT_EQ(log.find("internal error"), std::string::npos) << log;
}

// `yoke params` as a user types it (issue: "must work as written"): the reference model with
// three-way tying. Closed form: Emb. = V·d; the untied model has 3·V·d; the layers add
// 3 encoder layers (4d²+3d attention: keys have no bias; 2·d·f+f+d FFN, two norms) and 3 decoder layers (two
// attentions, FFN, three norms) and two final norms.
TEST(ParamsCli, JsonAsWrittenInTheIssue) {
  auto j = nlohmann::json::parse(output_of({YOKE_BINARY, "params", "--set", "tie=all", "--set", "d_model=256", "--set",
                                            "src_vocab_size=8000", "--set", "tgt_vocab_size=8000", "--set",
                                            "joint_vocab=true", "--json"}));
  const int64_t d = 256, f = 1024, v = 8000;
  const int64_t attn = 4 * d * d + 3 * d, ffn = 2 * d * f + f + d;
  const int64_t layers = 3 * (attn + ffn + 4 * d) + 3 * (2 * attn + ffn + 6 * d) + 4 * d;
  EXPECT_EQ(j.at("emb").get<int64_t>(), v * d);
  EXPECT_EQ(j.at("params").get<int64_t>(), layers + v * d);
  YOKE_EXPECT_NEAR(j.at("red").get<double>(), 2.0 / 3, 1e-12);
  // Separate vocabularies cannot share one matrix three ways: the error says how to fix it.
  EXPECT_NE(std::system((std::string(YOKE_BINARY) + " params --set tie=all --set src_vocab_size=10 "
                         "--set tgt_vocab_size=12 2>/dev/null").c_str()), 0);
}

// Shared-private from the command line: pair the vocabularies of the (separate-vocabulary)
// toy data, train a few updates, translate, and inspect a paired word.
TEST(SharedPrivateCli, PairTrainTranslateInspect) {
  const auto pairs = work_dir() / "pairs.tsv", dir = work_dir() / "sp";
  ASSERT_EQ(run({YOKE_BINARY, "pair", "--data", data_dir().string(), "--out", pairs.string(), "--threads", "1"},
                work_dir() / "pair.log"), 0)
      << slurp(work_dir() / "pair.log");
  auto args = train_args(dir, 20);
  for (const char* a : {"--tie", "shared-private", "--output", "cosine", "--pairs"}) args.push_back(a);
  args.push_back(pairs.string());
  ASSERT_EQ(run(args, work_dir() / "sp.log"), 0) << slurp(work_dir() / "sp.log");
  EXPECT_NE(slurp(work_dir() / "sp.log").find("tie shared-private"), std::string::npos);

  const auto hyp = work_dir() / "sp.hyp";
  ASSERT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input", (data_dir() / "test.toy.src.txt").string(),
                 "--output", hyp.string(), "--beam", "2"}, work_dir() / "sp-translate.log"), 0)
      << slurp(work_dir() / "sp-translate.log");

  // The first lexical pair of the file: its source word must be reported as paired with its target.
  std::ifstream in(pairs);
  std::string line, src, tgt, cat;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::getline(fields, src, '\t');
    std::getline(fields, tgt, '\t');
    std::getline(fields, cat, '\t');
    if (cat == "lm") break;
  }
  ASSERT_EQ(cat, "lm");
  const auto report = output_of({YOKE_BINARY, "inspect", "--model", dir.string(), "--word", src, "--top", "3"});
  EXPECT_NE(report.find("paired with: " + tgt + "  (category lm"), std::string::npos) << report;
  EXPECT_NE(report.find("nearest target words by cosine"), std::string::npos) << report;
}

// A run that diverges stops with an error naming the update, saves nothing non-finite and keeps
// its last finite checkpoints; a checkpoint holding NaN is refused by name wherever it is loaded.
TEST(TrainCli, ADivergingRunStopsAtOnceAndNaNWeightsAreRefused) {
  const auto dir = work_dir() / "diverging";
  ASSERT_EQ(run(train_args(dir, 10), work_dir() / "diverging1.log"), 0) << slurp(work_dir() / "diverging1.log");
  ASSERT_EQ(checkpoint_update(dir / "checkpoint_best.ykp"), 10);
  // lr = 1e30 moves every weight by ~1e30 at the first update: the products overflow.
  auto args = train_args(dir, 40);
  args.insert(args.end(), {"--lr", "1e30"});
  const auto log = work_dir() / "diverging2.log";
  EXPECT_NE(run(args, log), 0) << slurp(log);
  const std::string text = slurp(log);
  EXPECT_NE(text.find("the weights are no longer finite"), std::string::npos) << text;
  EXPECT_NE(text.find((dir / "checkpoint_last.ykp").string() + " keeps the last finite weights"), std::string::npos)
      << text;
  EXPECT_EQ(checkpoint_update(dir / "checkpoint_last.ykp"), 10);  // nothing after the divergence was saved
  EXPECT_EQ(checkpoint_update(dir / "checkpoint_best.ykp"), 10);
  EXPECT_FALSE(fs::exists(dir / "checkpoint_u20.ykp"));

  // The same weights with one NaN: translate names the file and the tensor.
  auto c = load_checkpoint((dir / "checkpoint_best.ykp").string());
  auto& w = c.tensors.at(model_tensor_name("decoder0.ffn.w1"));
  w = w.clone();
  w.view(-1)[3] = std::numeric_limits<float>::quiet_NaN();
  save_checkpoint((dir / "checkpoint_best.ykp").string(), c);
  const auto tlog = work_dir() / "diverging-translate.log";
  EXPECT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input",
                 (data_dir() / "test.toy.src.txt").string()}, tlog), 2);
  EXPECT_NE(slurp(tlog).find((dir / "checkpoint_best.ykp").string() + ": tensor 'decoder0.ffn.w1' holds NaN"),
            std::string::npos)
      << slurp(tlog);
}
