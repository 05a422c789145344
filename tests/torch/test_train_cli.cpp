// The `yoke` command end to end on tiny data: train, interrupt (SIGKILL and Ctrl-C), resume
// exactly, translate, average, score.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "text/prepare.h"
#include "text/synthetic.h"
#include "train/checkpoint.h"

namespace fs = std::filesystem;
using namespace yoke;

namespace {

fs::path work_dir() {
  static fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("yoke_cli_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// A small prepared data directory, made once for the whole file.
fs::path data_dir() {
  static fs::path data = [] {
    auto corpus = work_dir() / "corpus";
    SyntheticOptions so;
    so.train = 400;
    so.valid = 40;
    so.test = 30;
    write_synthetic_corpus(corpus.string(), so);
    PrepareOptions p;
    p.train_src = (corpus / "train.src").string();
    p.train_tgt = (corpus / "train.tgt").string();
    p.valid_src = (corpus / "valid.src").string();
    p.valid_tgt = (corpus / "valid.tgt").string();
    p.tests = {{(corpus / "test.src").string(), (corpus / "test.tgt").string()}};
    p.test_names = {"toy"};
    p.out_dir = (work_dir() / "data").string();
    p.vocab_size = 200;
    std::ostringstream log;
    prepare_data(p, log);
    return work_dir() / "data";
  }();
  return data;
}

std::vector<std::string> train_args(const fs::path& save_dir, int max_updates) {
  return {YOKE_BINARY, "train", "--data", data_dir().string(), "--save_dir", save_dir.string(),
          "--d_model", "32", "--heads", "2", "--ffn_dim", "64", "--encoder_layers", "1", "--decoder_layers", "1",
          "--max_tokens", "300", "--max_updates", std::to_string(max_updates), "--valid_interval", "10",
          "--valid_bleu", "false", "--threads", "1", "--warmup", "20", "--log_interval", "5", "--seed", "3",
          "--dropout", "0.1"};
}

pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int run(const std::vector<std::string>& args, const fs::path& log) {
  int status = 0;
  waitpid(spawn(args, log), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, at::Tensor> weights(const fs::path& ckpt) {
  std::map<std::string, at::Tensor> out;
  for (auto& [k, t] : load_checkpoint(ckpt.string()).tensors)
    if (k.rfind("model.", 0) == 0) out[k] = t;
  return out;
}

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
  waitpid(pid, &status, 0);
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
  waitpid(pid, &status, 0);
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
      EXPECT_NEAR(j.at("red").get<double>(), 1.0 / 3, 1e-9);  // default tie = decoder, joint vocabulary
    }
  }
  EXPECT_TRUE(types.count("start") && types.count("train") && types.count("valid") && types.count("end"));

  ASSERT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "3"}, work_dir() / "avg.log"), 0)
      << slurp(work_dir() / "avg.log");
  auto avg = weights(dir / "checkpoint_avg.ykp");
  auto a = weights(dir / "checkpoint_u20.ykp"), b = weights(dir / "checkpoint_u30.ykp"), c = weights(dir / "checkpoint_u40.ykp");
  for (auto& [k, t] : avg) EXPECT_TRUE(at::allclose(t, (a.at(k) + b.at(k) + c.at(k)) / 3, 1e-5, 1e-6)) << k;

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

  const auto out = work_dir() / "score.json";
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(out.c_str(), "w", stdout);
    (void)f;
    execl(YOKE_BINARY, YOKE_BINARY, "score", "--hyp", hyp.c_str(), "--ref", ref.c_str(), "--json", (char*)nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  auto j = nlohmann::json::parse(slurp(out));
  for (const char* k : {"bleu", "chrf", "chrf_pp", "precisions", "bp", "sys_len", "ref_len"}) EXPECT_TRUE(j.contains(k)) << k;
}

TEST(TrainCli, ErrorsNameTheFileAndLine) {
  const auto conf = work_dir() / "bad.conf";
  std::ofstream(conf) << "d_model = 32\n# comment\nheads = two\n";
  ASSERT_EQ(run({YOKE_BINARY, "train", "--config", conf.string()}, work_dir() / "bad.log"), 2);
  EXPECT_NE(slurp(work_dir() / "bad.log").find(conf.string() + ":3"), std::string::npos) << slurp(work_dir() / "bad.log");
  std::ofstream(conf) << "d_modle = 32\n";
  ASSERT_EQ(run({YOKE_BINARY, "train", "--config", conf.string()}, work_dir() / "bad.log"), 2);
  EXPECT_NE(slurp(work_dir() / "bad.log").find("did you mean 'd_model'"), std::string::npos) << slurp(work_dir() / "bad.log");
}
