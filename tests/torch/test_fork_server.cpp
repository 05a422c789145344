// `yoke --fork-server` (util/fork_server.h): a command run in a forked worker must see what an
// exec'd `yoke` would: its arguments, standard input, output and error, working directory and
// environment, and report the same exit status. The other suites run hundreds of commands through
// it (tests/torch/cli_helpers.h); these check each thing it carries on its own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cli_helpers.h"
#include "util/fork_server.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

// A file opened for a worker's standard output or error, or read as its input.
struct FileFd {
  explicit FileFd(const fs::path& p, int flags) : fd(::open(p.c_str(), flags | O_CLOEXEC, 0644)) {}
  ~FileFd() { ::close(fd); }
  int fd;
};

// Output, error and exit status of one command through the server, standard input from `in`.
struct Outcome {
  int status;
  std::string out, err;
};
Outcome through(ForkClient& server, const std::vector<std::string>& args, const fs::path& in = "/dev/null") {
  const auto out = work_dir() / "fork.out", err = work_dir() / "fork.err";
  int status;
  {
    FileFd i(in, O_RDONLY), o(out, O_WRONLY | O_CREAT | O_TRUNC), e(err, O_WRONLY | O_CREAT | O_TRUNC);
    status = server.run(args, i.fd, o.fd, e.fd);
  }
  return {status, slurp(out), slurp(err)};
}

}  // namespace

TEST(ForkServer, AWorkerPrintsWhatAnExecutedYokePrints) {
  ForkClient server(YOKE_BINARY);
  const Outcome version = through(server, {YOKE_BINARY, "--version"});
  EXPECT_EQ(version.status, 0) << version.err;
  EXPECT_EQ(version.out, output_of({"env", "YOKE_TEST_EXEC=1", YOKE_BINARY, "--version"}));
  EXPECT_NE(version.out.find("yoke "), std::string::npos);
  const Outcome unknown = through(server, {YOKE_BINARY, "no-such-command"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("unknown command 'no-such-command'"), std::string::npos) << unknown.err;
}

TEST(ForkServer, AWorkerReadsItsInputInTheCallersDirectory) {
  const auto dir = work_dir() / "fork-cwd";
  fs::create_directories(dir);
  std::ofstream(dir / "ref.txt") << "a cat sits on the mat\n";
  std::ofstream(dir / "hyp.txt") << "a cat sits on the mat\n";
  ForkClient server(YOKE_BINARY);
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  // --ref relative to the caller's directory; --hyp from the standard input given.
  const Outcome same = through(server, {YOKE_BINARY, "score", "--json", "--ref", "ref.txt", "--hyp", "/dev/stdin"},
                               dir / "hyp.txt");
  fs::current_path(before);
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.out.find("\"bleu\":100."), std::string::npos) << same.out;
}

TEST(ForkServer, AWorkerSeesTheCallersEnvironment) {
  ForkClient server(YOKE_BINARY);
  const auto model = tiny_translation_model();  // trained before the variable changes
  Outcome bad{};
  {
    ScopedEnv kernel("YOKE_FP32_KERNEL", "no-such-kernel");
    ASSERT_TRUE(kernel.set());
    bad = through(server, {YOKE_BINARY, "translate", "--model", model.string(), "--input", "/dev/stdin", "--threads", "1"},
                  data_dir() / "test.toy.src.txt");
  }
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("YOKE_FP32_KERNEL=no-such-kernel"), std::string::npos) << bad.err;
}

// OpenMP and OpenBLAS read their variables while they load, in the server: a changed one means a
// worker would not run as an exec'd `yoke` would, so the client says to exec instead.
TEST(ForkServer, AChangedLoadTimeVariableFallsBackToExec) {
  ForkClient server(YOKE_BINARY);
  {
    const char* now = std::getenv("OMP_NUM_THREADS");
    ScopedEnv threads("OMP_NUM_THREADS", now && std::string(now) == "3" ? "5" : "3");
    ASSERT_TRUE(threads.set());
    EXPECT_EQ(through(server, {YOKE_BINARY, "--version"}).status, -1);
  }
  EXPECT_EQ(through(server, {YOKE_BINARY, "--version"}).status, 0);
}

// A worker is signalled by its pid, as an exec'd process; its status then says which signal.
TEST(ForkServer, AKilledWorkerReportsItsSignal) {
  const auto ref = work_dir() / "fork-kill.ref";
  std::ofstream(ref) << "a cat\n";
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  ForkClient server(YOKE_BINARY);
  FileFd out(work_dir() / "fork-kill.out", O_WRONLY | O_CREAT | O_TRUNC);
  // Waits on its standard input, a pipe this test holds open.
  ForkClient::Worker w = server.start({YOKE_BINARY, "score", "--ref", ref.string(), "--hyp", "/dev/stdin"},
                                      pipe_fds[0], out.fd, out.fd);
  ASSERT_GT(w.pid, 0);
  int status = 0;
  EXPECT_FALSE(ForkClient::wait(w, &status, false)) << "it cannot have ended: its input is open";
  ASSERT_EQ(::kill(w.pid, SIGKILL), 0);
  ASSERT_TRUE(ForkClient::wait(w, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}
