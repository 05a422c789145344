// `yoke`, the starter (src/starter/starter.cpp): it runs the engine in its own folder with the same
// arguments and the math libraries' environment set. Here a copy of it runs beside a stand-in
// engine, a shell script that prints its arguments and environment; the last test runs the pair
// that was built.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cli_helpers.h"
#include "util/malloc_tunables.h"
#include "util/thread_policy.h"

namespace fs = std::filesystem;
using namespace yoke::test;

namespace {

// A folder holding a copy of the starter as `yoke` and, unless `with_engine` is false, a stand-in
// `yoke-engine`.
fs::path starter_folder(const std::string& name, bool with_engine = true) {
  const auto dir = work_dir() / name;
  fs::create_directories(dir);
  fs::copy_file(YOKE_BINARY, dir / "yoke", fs::copy_options::overwrite_existing);
  if (with_engine) {
    std::ofstream(dir / "yoke-engine") << "#!/bin/sh\necho \"engine $0 args: $*\"\nenv\n";
    ::chmod((dir / "yoke-engine").c_str(), 0755);
  }
  return dir;
}

// The starter's command line with every variable it sets removed from the environment first.
std::vector<std::string> with_nothing_set(const fs::path& dir, std::vector<std::string> args) {
  std::vector<std::string> argv = {"env", "-u", "OMP_WAIT_POLICY", "-u", "GOMP_SPINCOUNT", "-u", "OPENBLAS_THREAD_TIMEOUT",
                                   "-u", "GLIBC_TUNABLES", (dir / "yoke").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const auto& l : lines_of(text))
    if (l == line) return true;
  return false;
}

}  // namespace

TEST(Starter, RunsTheEngineBesideItWithTheArgumentsAndTheSettingsOfItsCommand) {
  const auto dir = starter_folder("starter");
  const std::string engine = (dir / "yoke-engine").string();

  auto out = output_of(with_nothing_set(dir, {"translate", "--model", "a b"}));
  EXPECT_TRUE(has_line(out, "engine " + engine + " args: translate --model a b")) << out;
  EXPECT_TRUE(has_line(out, "OMP_WAIT_POLICY=PASSIVE")) << out;
  EXPECT_TRUE(has_line(out, std::string("GOMP_SPINCOUNT=") + yoke::openmp_spin_count_for("translate"))) << out;
  EXPECT_TRUE(has_line(out, std::string("GLIBC_TUNABLES=") + yoke::malloc_tunables_for("translate"))) << out;
  EXPECT_EQ(out.find("OPENBLAS_THREAD_TIMEOUT="), std::string::npos) << "decoding keeps OpenBLAS's own: " << out;

  // Training: OpenBLAS's threads sleep at once, OpenMP's do not spin; `serve` keeps glibc's heap.
  out = output_of(with_nothing_set(dir, {"train"}));
  EXPECT_TRUE(has_line(out, "OPENBLAS_THREAD_TIMEOUT=4")) << out;
  EXPECT_EQ(out.find("GOMP_SPINCOUNT="), std::string::npos) << out;
  out = output_of(with_nothing_set(dir, {"serve"}));
  EXPECT_EQ(out.find("GLIBC_TUNABLES="), std::string::npos) << out;

  // The user's values are kept.
  out = output_of({"env", "OMP_WAIT_POLICY=ACTIVE", "GLIBC_TUNABLES=glibc.malloc.arena_max=2", "OPENBLAS_CORETYPE=Zen",
                   (dir / "yoke").string(), "translate"});
  EXPECT_TRUE(has_line(out, "OMP_WAIT_POLICY=ACTIVE")) << out;
  EXPECT_TRUE(has_line(out, "GLIBC_TUNABLES=glibc.malloc.arena_max=2")) << out;
  EXPECT_TRUE(has_line(out, "OPENBLAS_CORETYPE=Zen")) << out;
  EXPECT_EQ(out.find("GOMP_SPINCOUNT="), std::string::npos) << "spins come only with yoke's wait policy: " << out;
}

// The fork server's client compares the server's load-time environment with its own
// (util/fork_server.h): the starter passes it on untouched.
TEST(Starter, LeavesTheForkServersEnvironmentAsItIs) {
  const auto dir = starter_folder("starter_fork");
  const auto out = output_of(with_nothing_set(dir, {"--fork-server", "3"}));
  EXPECT_TRUE(has_line(out, "engine " + (dir / "yoke-engine").string() + " args: --fork-server 3")) << out;
  for (const char* name : {"OMP_WAIT_POLICY=", "GOMP_SPINCOUNT=", "OPENBLAS_THREAD_TIMEOUT=", "GLIBC_TUNABLES="})
    EXPECT_EQ(out.find(name), std::string::npos) << name << " in " << out;
}

TEST(Starter, SaysWhichEngineItCannotRun) {
  const auto dir = starter_folder("starter_alone", /*with_engine=*/false);
  const auto err = work_dir() / "starter_alone.err";
  EXPECT_EQ(run({(dir / "yoke").string(), "--version"}, err), 127);
  const auto text = slurp(err);
  EXPECT_NE(text.find("yoke: cannot run the yoke engine " + (dir / "yoke-engine").string() + ": No such file"),
            std::string::npos)
      << text;
}

// The engine names its process `yoke`, as users know it (top, pgrep -x, killall), not after its
// file. Its output goes to a pipe of one page that nobody reads yet, so it stays alive in main.
TEST(Starter, TheEngineIsNamedYoke) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  ASSERT_GE(::fcntl(pipe_fds[1], F_SETPIPE_SZ, 4096), 4096);
  const int err = ::open((work_dir() / "named.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // "env" first: started with exec, not by the fork server. `train --help` writes ~10 kB.
  const pid_t pid = start_with({"env", YOKE_BINARY, "train", "--help"}, pipe_fds[1], err);
  ::close(pipe_fds[1]);
  ::close(err);
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string comm, exe;
  for (int i = 0; i < 6000; ++i) {  // up to 60 s: the engine loads LibTorch before main
    std::error_code ec;
    exe = fs::read_symlink(proc + "/exe", ec).filename().string();
    comm = slurp(proc + "/comm");
    if (exe == "yoke-engine" && comm == "yoke\n") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(exe, "yoke-engine");
  EXPECT_EQ(comm, "yoke\n");
  char buffer[4096];
  while (::read(pipe_fds[0], buffer, sizeof buffer) > 0) {
  }
  ::close(pipe_fds[0]);
  EXPECT_EQ(finish(pid), 0) << slurp(work_dir() / "named.err");
}
