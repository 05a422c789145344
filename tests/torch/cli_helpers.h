// Running the `yoke` binary from tests: a work directory per test process, a small prepared
// data directory made once, and helpers to run a command and read its output.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../core/scoped_env.h"
#include "text/prepare.h"
#include "text/synthetic.h"
#include "util/fork_server.h"
#include "util/remove_tree.h"
#include "util/subprocess.h"

namespace yoke::test {

namespace fs = std::filesystem;

// Removed when the test process ends with every test passed: its models, corpora and logs come
// to about 100 MB, and a ctest run starts dozens of such processes. A failure keeps it, and says
// where, for its logs.
inline fs::path work_dir() {
  static fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("yoke_cli_test_" + std::to_string(::getpid()));
    remove_tree(d.string());  // left by an earlier process with the same pid: start clean
    fs::create_directories(d);
    // Built before the handler is registered, so destroyed after it runs (dir itself is not).
    static const std::string root = d.string();
    static const pid_t owner = ::getpid();
    std::atexit([] {
      if (::getpid() != owner) return;  // a forked child that exits: the folder is its parent's
      if (::testing::UnitTest::GetInstance()->Failed()) {
        std::fprintf(stderr, "test files kept in %s\n", root.c_str());
        return;
      }
      // Not fs::remove_all: the GPU build's libtorch.so shadows it with a copy that crashes when it
      // recurses (util/remove_tree.h).
      remove_tree(root);
    });
    return d;
  }();
  return dir;
}

// A small prepared data directory (joint vocabulary, one test set "toy"), made once per process.
inline fs::path data_dir() {
  static fs::path data = [] {
    auto corpus = work_dir() / "corpus";
    SyntheticOptions so;
    so.train = 400;
    so.valid = 40;
    so.test = 30;
    write_synthetic_corpus(corpus.string(), so);
    PrepareOptions p = synthetic_prepare_options(corpus.string(), (work_dir() / "data").string());
    p.vocab_size = 200;
    std::ostringstream log;
    prepare_data(p, log);
    return work_dir() / "data";
  }();
  return data;
}

// `yoke train` on data_dir() with a tiny model (d 32, 1+1 layers, one thread): fast enough to
// run, kill and resume many times in one test.
inline std::vector<std::string> tiny_train_args(const fs::path& save_dir, int max_updates, int seed) {
  return {YOKE_BINARY, "train", "--data", data_dir().string(), "--save_dir", save_dir.string(),
          "--d_model", "32", "--heads", "2", "--ffn_dim", "64", "--encoder_layers", "1", "--decoder_layers", "1",
          "--max_tokens", "300", "--max_updates", std::to_string(max_updates), "--valid_interval", "10",
          "--valid_bleu", "false", "--threads", "1", "--warmup", "20", "--log_interval", "5", "--seed",
          std::to_string(seed), "--dropout", "0.1"};
}

// Runs to the end; returns the exit code (128 + signal when killed).
inline int run(const std::vector<std::string>& args, const fs::path& log);
inline std::string slurp(const fs::path& p);

// `yoke train` with args(work_dir()/NAME), which must succeed (its log: work_dir()/NAME.log); the
// model directory. Tests keep it in a function-local static: one training per process.
template <typename Args>
fs::path train_into(const std::string& name, Args args) {
  const fs::path dir = work_dir() / name, log = work_dir() / (name + ".log");
  EXPECT_EQ(run(args(dir), log), 0) << slurp(log);
  return dir;
}

// A tiny translation model trained on data_dir() for 30 updates (a few seconds), made once per
// process: its outputs are poor but deterministic, enough for decoding, scoring and serving tests.
inline fs::path tiny_translation_model() {
  static fs::path dir = [] {
    auto d = work_dir() / "tiny_translation_model";
    EXPECT_EQ(run(tiny_train_args(d, 30, 3), work_dir() / "tiny_translation_model.log"), 0);
    return d;
  }();
  return dir;
}

// run(), output_of() and spawn() start `yoke` as a fork of a `yoke --fork-server` made once per
// test process (util/fork_server.h): the same main() in a fresh process, without loading LibTorch
// again (~0.45 s of CPU each, hundreds of times a suite run). YOKE_TEST_EXEC=1 starts every
// command with exec.
inline ForkClient* yoke_fork_server() {
  static const std::unique_ptr<ForkClient> client =
      std::getenv("YOKE_TEST_EXEC") != nullptr ? nullptr : std::make_unique<ForkClient>(YOKE_BINARY);
  return client.get();
}

// The workers spawn() started through the server, by pid: they are not this process's children.
inline std::map<pid_t, ForkClient::Worker>& forked_workers() {
  static std::map<pid_t, ForkClient::Worker> workers;
  return workers;
}

// Starts args with out and err as its standard output and error (args[0] found on PATH when it
// has no slash), `yoke` through the fork server; its pid: signal it with kill(), wait for it with
// wait_child().
inline pid_t start_with(const std::vector<std::string>& args, int out, int err) {
  if (args.at(0) == YOKE_BINARY)
    if (ForkClient* server = yoke_fork_server())
      if (const ForkClient::Worker w = server->start(args, 0, out, err); w.pid > 0)
        return forked_workers().emplace(w.pid, w).first->first;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    if (::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) _exit(127);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Starts a command with its standard error in `log`; returns its pid as start_with().
inline pid_t spawn(const std::vector<std::string>& args, const fs::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_GE(fd, 0) << log;
  const pid_t pid = start_with(args, 1, fd);
  ::close(fd);
  return pid;
}

// waitpid() for a pid from spawn(), with its status word (options: 0 or WNOHANG).
inline pid_t wait_child(pid_t pid, int* status, int options = 0) {
  int ignored = 0;
  if (status == nullptr) status = &ignored;
  auto& workers = forked_workers();
  const auto it = workers.find(pid);
  if (it == workers.end()) return waitpid(pid, status, options);
  if (!ForkClient::wait(it->second, status, !(options & WNOHANG))) return 0;
  workers.erase(it);
  return pid;
}

// The lines of a text (a command's output, a file's content).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Waits for a pid from start_with() or spawn(); its exit code (128 + signal when killed, 127 when
// it could not start).
inline int finish(pid_t pid) {
  int status = 0;
  return pid < 0 || wait_child(pid, &status) != pid ? 127 : exit_code(status);
}

// Runs args to the end as start_with() starts it; returns its exit code as finish().
inline int run_with(const std::vector<std::string>& args, int out, int err) { return finish(start_with(args, out, err)); }

// Runs to the end with standard error in log; returns its exit code as finish().
inline int run(const std::vector<std::string>& args, const fs::path& log) { return finish(spawn(args, log)); }

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Standard output of a command that must succeed (its standard error goes to a log).
inline std::string output_of(const std::vector<std::string>& args) {
  const auto out = work_dir() / "stdout.txt", log = work_dir() / "stderr.txt";
  const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_TRUE(out_fd >= 0 && log_fd >= 0) << out << ", " << log;
  const int rc = run_with(args, out_fd, log_fd);
  ::close(out_fd);
  ::close(log_fd);
  std::string cmd;
  for (const auto& a : args) cmd += "'" + a + "' ";
  EXPECT_EQ(rc, 0) << cmd << "\n" << slurp(log);
  return slurp(out);
}

}  // namespace yoke::test
