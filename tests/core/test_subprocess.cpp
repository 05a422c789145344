// util/subprocess.h: a helper started with run_inheriting_output does not outlive the process that
// started it (a killed `yoke export` used to leave its ONNX exporter running and writing).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "util/subprocess.h"

namespace yoke {
namespace {

TEST(Subprocess, AHelperDiesWithTheProcessThatStartedIt) {
  const auto pid_file = std::filesystem::temp_directory_path() / ("yoke_subprocess_" + std::to_string(::getpid()));
  std::filesystem::remove(pid_file);
  const pid_t starter = ::fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {  // the "yoke": starts a helper that records its pid and sleeps
    run_inheriting_output({"/bin/sh", "-c", "echo $$ > '" + pid_file.string() + "'; exec sleep 60"});
    ::_exit(0);
  }
  pid_t helper = 0;
  for (int i = 0; i < 500 && helper == 0; ++i) {  // up to 5 s for the helper to start
    std::ifstream(pid_file) >> helper;
    if (helper == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(helper, 0) << "the helper did not start";
  EXPECT_EQ(::kill(helper, 0), 0);  // running
  ::kill(starter, SIGKILL);  // the starter dies without a chance to clean up
  ::waitpid(starter, nullptr, 0);
  // Gone: no such process, or a zombie (dead, waiting for a reaper; a container's PID 1 may never reap).
  const auto dead = [&] {
    if (::kill(helper, 0) != 0) return errno == ESRCH;
    std::string stat;
    std::getline(std::ifstream("/proc/" + std::to_string(helper) + "/stat"), stat);
    const auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
  };
  bool gone = false;
  for (int i = 0; i < 500 && !(gone = dead()); ++i)  // up to 5 s; it goes within milliseconds
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!gone) ::kill(helper, SIGKILL);
  EXPECT_TRUE(gone) << "the helper outlived the process that started it";
  std::filesystem::remove(pid_file);
}

}  // namespace
}  // namespace yoke
