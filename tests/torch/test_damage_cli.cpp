// Nothing lost, nothing silently wrong, tried from the outside with the `yoke` binary: output to
// a full device, a damaged checkpoint, two trainers on one save_dir, SIGTERM, a resumed run's
// metrics, and arguments that cannot mean anything.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "store/checkpoint.h"

namespace fs = std::filesystem;
using namespace yoke::test;

namespace {

std::vector<std::string> train_args(const fs::path& save_dir, int max_updates) {
  return tiny_train_args(save_dir, max_updates, 5);
}

const fs::path& trained_model() {
  static const fs::path dir = train_into("damage-model", [](const fs::path& d) { return train_args(d, 20); });
  return dir;
}

// Exit code and standard error of a shell command line (for redirections such as > /dev/full).
std::pair<int, std::string> shell(const std::string& line) {
  const auto err = work_dir() / "shell.err";
  const int status = std::system((line + " 2>'" + err.string() + "'").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128, slurp(err)};
}

bool wait_for(const fs::path& p, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(p)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST(DamageCli, WritesToAFullDeviceFailTheCommand) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  const std::string bin = YOKE_BINARY, model = trained_model().string();
  const std::string src = (data_dir() / "test.toy.src.txt").string(), ref = (data_dir() / "test.toy.tgt.txt").string();
  auto [rc, err] = shell("'" + bin + "' translate --model '" + model + "' --beam 1 --input '" + src + "' >/dev/full");
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("cannot write standard output: No space left on device"), std::string::npos) << err;
  std::tie(rc, err) = shell("'" + bin + "' translate --model '" + model + "' --beam 1 --input '" + src + "' --output /dev/full");
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("/dev/full: cannot write: No space left on device"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  std::tie(rc, err) = shell("'" + bin + "' score --hyp '" + ref + "' --ref '" + ref + "' >/dev/full");
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
}

// metrics.jsonl in place of a device (/dev/full, or a pipe) is refused before the run starts, as
// every file yoke opens must be a regular one (util/regular_file.h): writing into /dev/full once
// ended a run with exit 0 and no records, and a pipe blocked its start. (A write that fails on a
// full disk still stops the run naming the file: MetricsLog::write checks the stream.)
TEST(DamageCli, MetricsInPlaceOfADeviceAreRefusedBeforeTheRun) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  const auto dir = work_dir() / "metrics-full";
  fs::create_directories(dir);
  fs::create_symlink("/dev/full", dir / "metrics.jsonl");
  const auto log = work_dir() / "metrics-full.log";
  EXPECT_EQ(run(train_args(dir, 5), log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find((dir / "metrics.jsonl").string() + ": is a device where a metrics log should be"),
            std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(dir / "checkpoint_last.ykp"));
}

TEST(DamageCli, ZeroedTensorBytesInACheckpointAreCaught) {
  const auto damaged = work_dir() / "damaged.ykp";
  fs::copy_file(trained_model() / "checkpoint_last.ykp", damaged, fs::copy_options::overwrite_existing);
  {
    // The first 4 KB of tensor data, after "YOKECKP2", the header's length and its CRC-32, and the
    // header: model weights ("model.*" come first), which translate reads. The optimizer state at
    // the end of the file it leaves unread (store/model_store.h, read_model_file).
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    uint64_t header_bytes = 0;
    f.seekg(8);
    f.read(reinterpret_cast<char*>(&header_bytes), sizeof header_bytes);
    f.seekp(std::streamoff(8 + 8 + 4 + header_bytes));
    const std::string zeros(4096, '\0');
    f.write(zeros.data(), std::streamsize(zeros.size()));
  }
  const auto log = work_dir() / "damaged.log";
  EXPECT_EQ(run({YOKE_BINARY, "translate", "--model", trained_model().string(), "--checkpoint", damaged.string(),
                 "--input", (data_dir() / "test.toy.src.txt").string()}, log),
            2);
  EXPECT_NE(slurp(log).find(damaged.string() + ": damaged checkpoint: tensor"), std::string::npos) << slurp(log);
}

TEST(DamageCli, OneTrainerPerSaveDirSigtermExits143AndResumeKeepsMetricsOnce) {
  const auto dir = work_dir() / "locked";
  const pid_t first = spawn(train_args(dir, 100000), work_dir() / "locked1.log");
  ASSERT_TRUE(wait_for(dir / "checkpoint_u10.ykp", 120)) << slurp(work_dir() / "locked1.log");
  const auto second_log = work_dir() / "locked2.log";
  EXPECT_EQ(run(train_args(dir, 50), second_log), 2);
  EXPECT_NE(slurp(second_log).find("in use by another yoke process (pid " + std::to_string(first) + ")"),
            std::string::npos)
      << slurp(second_log);
  // Let the first run log past its checkpoint, so a resume replays logged updates.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(first, SIGTERM);
  int status = 0;
  wait_child(first, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);  // 128 + SIGTERM, as shells report it

  std::ofstream(dir / "checkpoint_last.ykp.tmp999_3") << "left by a killed writer";
  std::ofstream(dir / "metrics.jsonl", std::ios::app) << "{\"type\":\"train\",\"update\":99999,\"loss\":1}\n{\"type\":\"tr";
  ASSERT_EQ(run(train_args(dir, 50), work_dir() / "locked3.log"), 0) << slurp(work_dir() / "locked3.log");
  EXPECT_FALSE(fs::exists(dir / "checkpoint_last.ykp.tmp999_3"));
  std::map<std::pair<std::string, int64_t>, int> seen;
  std::ifstream metrics(dir / "metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const auto j = nlohmann::json::parse(line);  // a torn line would throw here
    const std::string type = j.at("type");
    if (type == "train" || type == "valid") ++seen[{type, j.at("update").get<int64_t>()}];
  }
  EXPECT_FALSE(seen.count({"train", 99999}));
  EXPECT_TRUE(seen.count({"valid", 50}));
  for (const auto& [key, n] : seen) EXPECT_EQ(n, 1) << key.first << " at update " << key.second << " logged " << n << " times";
}

TEST(DamageCli, ArgumentsThatMeanNothingAreErrors) {
  const auto log = work_dir() / "nothing.log";
  EXPECT_EQ(run({YOKE_BINARY, "average", "--model", trained_model().string(), "--last", "0"}, log), 2);
  EXPECT_NE(slurp(log).find("--last must be at least 1"), std::string::npos) << slurp(log);
  const auto empty = work_dir() / "empty.txt";
  std::ofstream(empty).flush();
  EXPECT_EQ(run({YOKE_BINARY, "score", "--hyp", empty.string(), "--ref", empty.string()}, log), 2);
  EXPECT_NE(slurp(log).find("no lines to score"), std::string::npos) << slurp(log);
}

TEST(DamageCli, TranslateWarnsWithTheLineNumberWhenItCutsASource) {
  const auto input = work_dir() / "long.src";
  {
    std::ofstream f(input);
    f << "Ron kasipe.\n";
    for (int i = 0; i < 700; ++i) f << "Ron kasipe ";
    f << "\n";
  }
  const auto out = work_dir() / "long.hyp", log = work_dir() / "long.log";
  ASSERT_EQ(run({YOKE_BINARY, "translate", "--model", trained_model().string(), "--input", input.string(), "--output",
                 out.string(), "--beam", "1", "--max-len-a", "0", "--max-len-b", "5"}, log),
            0)
      << slurp(log);
  EXPECT_NE(slurp(log).find(input.string() + ":2: warning: longer than the model's 1023 source positions"),
            std::string::npos)
      << slurp(log);
  EXPECT_EQ(slurp(log).find(input.string() + ":1: warning"), std::string::npos);
}

// Kills land anywhere, also while checkpoint_best is being written (a validation every 2
// updates): every checkpoint left behind must load, and the run must resume.
TEST(DamageCli, KillsAtRandomTimesNeverLeaveATornCheckpoint) {
  const auto dir = work_dir() / "killed-often";
  auto args = train_args(dir, 100000);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--valid_interval") args[i + 1] = "2";
  uint32_t state = 12345;  // a fixed sequence of delays: the same test on every run
  int with_best = 0;
  for (int round = 0; round < 40; ++round) {
    const auto log = work_dir() / "killed-often.log";
    fs::remove(log);  // else the previous round's "model:" could be read before the child truncates it
    const pid_t pid = spawn(args, log);
    // The delays count from the trainer's first line ("model: ..."), not from the start of the
    // process: loading LibTorch and the data takes from a fraction of a second to several, with
    // the machine's load, and a kill before training proves nothing.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (slurp(log).find("model:") == std::string::npos && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    state = state * 1664525u + 1013904223u;
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + (state >> 8) % 600));
    ::kill(pid, SIGKILL);
    int status = 0;
    wait_child(pid, &status, 0);
    ASSERT_TRUE(fs::is_directory(dir)) << "round " << round << ": " << slurp(log);
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".ykp") continue;
      EXPECT_NO_THROW(yoke::load_checkpoint(e.path().string())) << "round " << round << ": " << e.path();
    }
    with_best += fs::exists(dir / "checkpoint_best.ykp");
  }
  EXPECT_GT(with_best, 0) << "no kill came after a validation; the test proves nothing";
  auto finish = train_args(dir, 1);  // a finished-or-past limit run resumes and stops at once
  EXPECT_EQ(run(finish, work_dir() / "killed-often-end.log"), 0) << slurp(work_dir() / "killed-often-end.log");
}
