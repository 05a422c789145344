// Data-parallel training through the `yoke` command, on loopback with c10d's Gloo: two ranks
// against one process that takes the same global batches, resume with another number of ranks,
// and ranks that die. Every process here stops by itself: runs are a few dozen updates, and the
// waits have deadlines after which the test kills what is left and fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "store/checkpoint.h"
#include "train/local_launch.h"
#include "train/process_group.h"
#include "margin.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// As spawn(), with extra environment variables (the torchrun ones) in the child.
pid_t spawn_with_env(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                     const fs::path& log) {
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
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

// Waits for pid up to `seconds`; returns its exit code (128 + signal), or -1 after killing it
// when it did not end in time.
int wait_for(pid_t pid, double seconds) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(int64_t(seconds * 1000));
  int status = 0;
  while (Clock::now() < deadline) {
    if (wait_child(pid, &status, WNOHANG) == pid) return exit_code(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  wait_child(pid, &status, 0);
  return -1;
}

bool wait_for_file(const fs::path& p, double seconds) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(int64_t(seconds * 1000));
  while (Clock::now() < deadline) {
    if (fs::exists(p)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::map<std::string, at::Tensor> weights(const fs::path& ckpt) { return model_weights(load_checkpoint(ckpt.string())); }

int64_t checkpoint_update(const fs::path& ckpt) {
  return load_checkpoint(ckpt.string()).meta.at("state").at("update").get<int64_t>();
}

// With 2 ranks each gradient element is one float addition, a + b, in Gloo as in one process's
// accumulation, and addition commutes: with one thread a process the weights come out identical
// under every BLAS kernel family (scripts/test-numerics.sh --all). The tolerance is for what
// differs when the ranks and the single process run other thread counts (OpenBLAS splits the
// batch sums by thread), carried on by Adam without damping over a few dozen updates: 1.2e-7
// under Prescott's kernels and 6.1e-7 under Zen's were seen; it is ~1% of one update's size at
// these learning rates (≤ 1e-3 per step). (Before keys lost their bias, model/attention.h, that
// bias had no gradient and Adam moved it by its rounding noise: 2e-4, which no tolerance bounds.)
// A real mistake (a batch lost or counted twice, the wrong token normalisation) moves weights by
// whole updates: the companion check below shows that it exceeds the tolerance 50 times over.
constexpr double kRankTolerance = 1e-5;

void expect_close_weights(const fs::path& a, const fs::path& b) {
  auto wa = weights(a), wb = weights(b);
  ASSERT_EQ(wa.size(), wb.size());
  ASSERT_FALSE(wa.empty());
  double worst = 0;
  std::string worst_name;
  for (auto& [k, t] : wa) {
    const double d = (t - wb.at(k)).abs().max().item<double>();
    if (d > worst) worst = d, worst_name = k;
  }
  YOKE_EXPECT_AT_MOST(worst, kRankTolerance) << "largest difference in " << worst_name;
  std::cout << "[   info   ] largest weight difference " << worst << " (" << worst_name << ")" << std::endl;
}

// How far apart two checkpoints are: the check that the tolerance above is not so loose that
// any two runs pass.
double max_weight_difference(const fs::path& a, const fs::path& b) {
  auto wa = weights(a), wb = weights(b);
  double worst = 0;
  for (auto& [k, t] : wa) worst = std::max(worst, (t - wb.at(k)).abs().max().item<double>());
  return worst;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<nlohmann::json> metrics(const fs::path& dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::vector<std::string> tiny(const fs::path& dir, int updates) { return tiny_train_args(dir, updates, 3); }

}  // namespace

TEST(DistributedCli, TwoRanksEqualOneProcessWithUpdateFreq2) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  const auto one = work_dir() / "dist_one", two = work_dir() / "dist_two", other = work_dir() / "dist_uf1";
  ASSERT_EQ(run(with(tiny(one, 24), {"--update_freq", "2"}), work_dir() / "dist_one.log"), 0)
      << slurp(work_dir() / "dist_one.log");
  ASSERT_EQ(run(with(tiny(two, 24), {"--nproc", "2"}), work_dir() / "dist_two.log"), 0)
      << slurp(work_dir() / "dist_two.log");
  EXPECT_EQ(checkpoint_update(two / "checkpoint_last.ykp"), 24);
  expect_close_weights(one / "checkpoint_last.ykp", two / "checkpoint_last.ykp");

  // The tolerance tells runs apart: one process taking one batch per update (half the data per
  // update) ends far from both.
  ASSERT_EQ(run(tiny(other, 24), work_dir() / "dist_uf1.log"), 0);
  EXPECT_GT(max_weight_difference(one / "checkpoint_last.ykp", other / "checkpoint_last.ykp"), 50 * kRankTolerance);

  // One writer: rank 0 logs once and writes one metrics file with one start and one end.
  const auto log = slurp(work_dir() / "dist_two.log");
  EXPECT_EQ(count(log, "distributed: 2 ranks"), 1u) << log;
  EXPECT_EQ(count(log, "done: "), 1u) << log;
  int starts = 0, ends = 0, trains = 0;
  for (const auto& j : metrics(two)) {
    starts += j.at("type") == "start";
    ends += j.at("type") == "end";
    trains += j.at("type") == "train";
    if (j.at("type") == "start") EXPECT_EQ(j.at("world_size"), 2);
  }
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(ends, 1);
  EXPECT_EQ(trains, 24 / 5);  // log_interval 5, written once
  // The validation loss is computed over the whole set, shared between the ranks: the same as
  // one process's to float tolerance.
  auto valid_loss = [](const fs::path& dir) {
    double v = NAN;
    for (const auto& j : metrics(dir))
      if (j.at("type") == "valid") v = j.at("loss");
    return v;
  };
  YOKE_EXPECT_NEAR(valid_loss(one), valid_loss(two), 1e-3);
}

TEST(DistributedCli, ResumesWithAnotherNumberOfRanks) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  const auto straight = work_dir() / "resume_straight", a = work_dir() / "resume_2to1", b = work_dir() / "resume_1to2";
  ASSERT_EQ(run(with(tiny(straight, 30), {"--update_freq", "2"}), work_dir() / "resume_straight.log"), 0);

  // 2 ranks for 15 updates, then one process with update_freq 2: the same global batches.
  ASSERT_EQ(run(with(tiny(a, 15), {"--nproc", "2"}), work_dir() / "resume_2to1_a.log"), 0);
  ASSERT_EQ(checkpoint_update(a / "checkpoint_last.ykp"), 15);
  ASSERT_EQ(run(with(tiny(a, 30), {"--update_freq", "2"}), work_dir() / "resume_2to1_b.log"), 0);
  EXPECT_NE(slurp(work_dir() / "resume_2to1_b.log").find("resumed from"), std::string::npos);
  EXPECT_EQ(checkpoint_update(a / "checkpoint_last.ykp"), 30);
  expect_close_weights(straight / "checkpoint_last.ykp", a / "checkpoint_last.ykp");

  // And the other way round.
  ASSERT_EQ(run(with(tiny(b, 15), {"--update_freq", "2"}), work_dir() / "resume_1to2_a.log"), 0);
  ASSERT_EQ(run(with(tiny(b, 30), {"--nproc", "2"}), work_dir() / "resume_1to2_b.log"), 0)
      << slurp(work_dir() / "resume_1to2_b.log");
  EXPECT_EQ(checkpoint_update(b / "checkpoint_last.ykp"), 30);
  expect_close_weights(straight / "checkpoint_last.ykp", b / "checkpoint_last.ykp");

  // A change of the batches per update is allowed, and said.
  const auto c = work_dir() / "resume_note";
  ASSERT_EQ(run(with(tiny(c, 10), {"--nproc", "2"}), work_dir() / "resume_note_a.log"), 0);
  ASSERT_EQ(run(tiny(c, 12), work_dir() / "resume_note_b.log"), 0);
  const auto note = slurp(work_dir() / "resume_note_b.log");
  EXPECT_NE(note.find("trained with 2 batches per update, this run takes 1"), std::string::npos) << note;
}

TEST(DistributedCli, AKilledRankStopsTheOtherWithAnErrorNamingIt) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  // Started as torchrun starts workers: the environment, no launcher.
  const auto dir = work_dir() / "dist_killed";
  const std::string port = std::to_string(free_loopback_port());
  auto args = with(tiny(dir, 100000), {"--dist_timeout", "30"});
  std::vector<pid_t> pids;
  for (int r = 0; r < 2; ++r)
    pids.push_back(spawn_with_env(args, {{"RANK", std::to_string(r)}, {"LOCAL_RANK", std::to_string(r)},
                                         {"WORLD_SIZE", "2"}, {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
                                         {"MASTER_PORT", port}},
                                  work_dir() / ("dist_killed" + std::to_string(r) + ".log")));
  const bool trained = wait_for_file(dir / "checkpoint_u10.ykp", 120);
  ::kill(pids[1], SIGKILL);
  const auto t0 = Clock::now();
  const int rc = wait_for(pids[0], 60);  // the 30 s collective timeout, and margin
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  wait_for(pids[1], 5);
  ASSERT_TRUE(trained) << slurp(work_dir() / "dist_killed0.log");
  const auto log = slurp(work_dir() / "dist_killed0.log");
  EXPECT_NE(rc, -1) << "rank 0 hung after rank 1 died\n" << log;
  EXPECT_EQ(rc, 1) << "rank 0's exit status (128 + N: killed by signal N)\n" << log;
  EXPECT_LT(seconds, 45) << log;
  EXPECT_NE(log.find("yoke train: error: rank 0:"), std::string::npos) << "exit status " << rc << "\n" << log;
  EXPECT_NE(log.find("another rank died or stopped answering"), std::string::npos) << log;
  // What rank 0 saved before still loads.
  EXPECT_GE(checkpoint_update(dir / "checkpoint_last.ykp"), 10);
}

TEST(DistributedCli, TheLauncherNamesTheWorkerThatDiedAndStopsTheRest) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  const auto dir = work_dir() / "dist_launch_killed";
  const pid_t launcher = spawn(with(tiny(dir, 100000), {"--nproc", "2", "--dist_timeout", "30"}),
                               work_dir() / "dist_launch_killed.log");
  const bool trained = wait_for_file(dir / "checkpoint_u10.ykp", 120);
  // The worker of rank 1 is the launcher's child with RANK=1 in its environment.
  pid_t rank1 = 0;
  std::ifstream children("/proc/" + std::to_string(launcher) + "/task/" + std::to_string(launcher) + "/children");
  for (pid_t c; children >> c;) {
    std::ifstream env("/proc/" + std::to_string(c) + "/environ");
    for (std::string var; std::getline(env, var, '\0');)
      if (var == "RANK=1") rank1 = c;
  }
  if (rank1 > 0) ::kill(rank1, SIGKILL);
  const int rc = wait_for(launcher, 60);
  ASSERT_TRUE(trained) << slurp(work_dir() / "dist_launch_killed.log");
  ASSERT_GT(rank1, 0) << "no worker with RANK=1 among the launcher's children";
  const auto log = slurp(work_dir() / "dist_launch_killed.log");
  EXPECT_EQ(rc, 128 + SIGKILL) << log;
  EXPECT_NE(log.find("worker rank 1 (pid " + std::to_string(rank1) + ") was killed by signal 9"), std::string::npos)
      << log;
}

// A worker for the next test: this test program started again by run_local_workers. It exits
// with the status in YOKE_TEST_WORKER_EXIT when it is rank 1, and with 0 otherwise.
TEST(DistributedCli, WorkerThatExitsAsItsEnvironmentSays) {
  const char* code = std::getenv("YOKE_TEST_WORKER_EXIT");
  const char* rank = std::getenv("RANK");
  if (!code || !rank) GTEST_SKIP() << "run only as a worker of LaunchersMessageIsOneWrite";
  std::_Exit(std::string(rank) == "1" ? std::atoi(code) : 0);
}

// The launcher's message shares stderr with its workers' messages: written in pieces, it came out
// with a worker's error inside it (CI, bdc4fa6). Each piece the stream receives is recorded.
TEST(DistributedCli, LaunchersMessageIsOneWrite) {
  struct Pieces : std::streambuf {
    std::vector<std::string> seen;
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      seen.emplace_back(s, size_t(n));
      return n;
    }
    int overflow(int c) override {
      if (c != EOF) seen.emplace_back(1, char(c));
      return c;
    }
  } pieces;
  std::ostream log(&pieces);
  // The workers inherit the environment: under gtest's sharding (scripts/test-numerics.sh) their
  // shard would hold no test, and they would exit 0 having run nothing.
  int rc = -1;
  {
    const ScopedEnv no_index("GTEST_SHARD_INDEX", nullptr), no_total("GTEST_TOTAL_SHARDS", nullptr),
        no_status("GTEST_SHARD_STATUS_FILE", nullptr), worker_exit("YOKE_TEST_WORKER_EXIT", "3");
    ASSERT_TRUE(worker_exit.set());
    rc = run_local_workers(
        2, {"yoke_torch_tests", "--gtest_brief=1", "--gtest_filter=DistributedCli.WorkerThatExitsAsItsEnvironmentSays"},
        log, 5);
  }
  EXPECT_EQ(rc, 3);
  std::string all;
  for (const auto& p : pieces.seen) all += p;
  size_t whole = 0;
  for (const auto& p : pieces.seen)
    whole += p.rfind("yoke: worker rank 1 (pid ", 0) == 0 && p.find("exited with status 3") != std::string::npos &&
             p.back() == '\n';
  EXPECT_EQ(whole, 1u) << pieces.seen.size() << " pieces: " << all;
}

TEST(DistributedCli, WrongEnvironmentIsAnErrorNamingTheVariable) {
  const auto dir = work_dir() / "dist_env";
  auto rc = [&](const std::map<std::string, std::string>& env, const std::string& name) {
    const auto log = work_dir() / (name + ".log");
    const int code = wait_for(spawn_with_env(tiny(dir, 5), env, log), 60);  // before reading its log
    return std::make_pair(code, slurp(log));
  };
  auto [rc1, log1] = rc({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}}, "dist_env_rank");
  EXPECT_EQ(rc1, 2) << log1;
  EXPECT_NE(log1.find("RANK=2 is not below WORLD_SIZE=2"), std::string::npos) << log1;
  auto [rc2, log2] = rc({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", ""}}, "dist_env_port");
  EXPECT_EQ(rc2, 2) << log2;
  EXPECT_NE(log2.find("needs MASTER_PORT"), std::string::npos) << log2;
  auto [rc3, log3] = rc({{"RANK", "x"}, {"WORLD_SIZE", "2"}}, "dist_env_text");
  EXPECT_EQ(rc3, 2) << log3;
  EXPECT_NE(log3.find("RANK='x' is not a non-negative integer"), std::string::npos) << log3;
  // --nproc inside a launch would start workers of workers.
  const auto nested = work_dir() / "dist_env_nested2.log";
  EXPECT_EQ(wait_for(spawn_with_env(with(tiny(dir, 5), {"--nproc", "2"}), {{"WORLD_SIZE", "2"}, {"MASTER_PORT", "29500"}},
                                    nested),
                     60),
            2);
  EXPECT_NE(slurp(nested).find("inside a distributed launch"), std::string::npos) << slurp(nested);
}

TEST(DistributedCli, ExperimentTrainsEachRunOnTwoWorkers) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  const std::string grid = std::string(YOKE_SOURCE_DIR) + "/configs/grids/tiny.grid";
  auto experiment = [&](const fs::path& out, const std::vector<std::string>& more) {
    return with({YOKE_BINARY, "experiment", "--grid", grid, "--set", "data=" + data_dir().string(), "--out", out.string(),
                 "--variants", "dot"},
                more);
  };
  const auto two = work_dir() / "experiment_nproc2", one = work_dir() / "experiment_uf2";
  ASSERT_EQ(run(experiment(two, {"--nproc", "2"}), work_dir() / "experiment_nproc2.log"), 0)
      << slurp(work_dir() / "experiment_nproc2.log");
  ASSERT_EQ(run(experiment(one, {"--set", "update_freq=2"}), work_dir() / "experiment_uf2.log"), 0);
  EXPECT_NE(slurp(work_dir() / "experiment_nproc2.log").find("training on 2 local workers"), std::string::npos);
  for (const char* seed : {"seed1", "seed2"}) {
    const auto run2 = two / "runs" / "dot" / seed, run1 = one / "runs" / "dot" / seed;
    ASSERT_TRUE(fs::exists(run2 / "result.json")) << seed;
    EXPECT_TRUE(fs::exists(run2 / "train.conf"));
    const auto r = nlohmann::json::parse(slurp(run2 / "result.json"));
    EXPECT_EQ(r.at("updates"), 12);
    EXPECT_EQ(r.at("stop_reason"), "max_updates");
    EXPECT_EQ(metrics(run2 / "model").front().at("world_size"), 2);
    expect_close_weights(run1 / "model" / "checkpoint_last.ykp", run2 / "model" / "checkpoint_last.ykp");
  }
  EXPECT_TRUE(fs::exists(two / "report.json"));
}

// torchrun starts yoke's workers as it starts Python ones, in both of its ways: its own c10d
// rendezvous (rank 0 serves the store) and fixed addresses (torchrun's agent serves it).
TEST(DistributedCli, TorchrunStartsTheWorkers) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  const std::string torchrun = "/usr/bin/torchrun";
  if (!fs::exists(torchrun)) GTEST_SKIP() << "no " << torchrun << " (Debian: apt-get install python3-torch)";
  const auto straight = work_dir() / "torchrun_uf2";
  ASSERT_EQ(run(with(tiny(straight, 20), {"--update_freq", "2"}), work_dir() / "torchrun_uf2.log"), 0);
  // torch 1.13's torchrun under Python 3.11 fails on its own default `--redirects 0` (3.11's
  // IntFlag no longer lists the zero flag), so the test names non-zero ones; yoke logs to stderr.
  const std::vector<std::string> launch = {torchrun, "--redirects", "1", "--tee", "1", "--no_python",
                                           "--nproc_per_node", "2"};
  const std::string port = std::to_string(free_loopback_port());
  const std::vector<std::pair<std::string, std::vector<std::string>>> ways = {
      {"torchrun_standalone", {"--standalone"}},
      {"torchrun_static", {"--nnodes", "1", "--node_rank", "0", "--master_addr", "127.0.0.1", "--master_port", port}}};
  for (const auto& [name, how] : ways) {
    const auto dir = work_dir() / name;
    const auto args = with(with(launch, how), tiny(dir, 20));  // torchrun … yoke train …
    ASSERT_EQ(wait_for(spawn(args, work_dir() / (name + ".log")), 240), 0) << slurp(work_dir() / (name + ".log"));
    EXPECT_EQ(checkpoint_update(dir / "checkpoint_last.ykp"), 20) << name;
    expect_close_weights(straight / "checkpoint_last.ykp", dir / "checkpoint_last.ykp");
  }
}

TEST(DistributedCli, CtrlCToTheLauncherStopsEveryRankAfterTheSameUpdateAndRank0Saves) {
  if (!distributed_training_available()) GTEST_SKIP() << "this build has no c10d Gloo (libgloo-dev)";
  const auto dir = work_dir() / "dist_ctrlc";
  const pid_t launcher = spawn(with(tiny(dir, 100000), {"--nproc", "2"}), work_dir() / "dist_ctrlc.log");
  const bool trained = wait_for_file(dir / "checkpoint_u10.ykp", 120);
  ::kill(launcher, SIGINT);
  const int rc = wait_for(launcher, 60);
  ASSERT_TRUE(trained) << slurp(work_dir() / "dist_ctrlc.log");
  const auto log = slurp(work_dir() / "dist_ctrlc.log");
  EXPECT_EQ(rc, 130) << log;
  EXPECT_EQ(count(log, "interrupted: saved"), 1u) << log;  // rank 0 only
  EXPECT_EQ(log.find("worker rank"), std::string::npos) << "an interrupt is no worker failure\n" << log;
  const auto ckpt = load_checkpoint((dir / "checkpoint_last.ykp").string());
  EXPECT_EQ(ckpt.meta.at("reason"), "interrupt");
  // It resumes, on one process this time.
  const int64_t saved = ckpt.meta.at("state").at("update");
  ASSERT_EQ(run(with(tiny(dir, int(saved) + 4), {"--update_freq", "2"}), work_dir() / "dist_ctrlc2.log"), 0)
      << slurp(work_dir() / "dist_ctrlc2.log");
  EXPECT_EQ(checkpoint_update(dir / "checkpoint_last.ykp"), saved + 4);
}
