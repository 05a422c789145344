// The math-library settings a yoke program starts with (util/thread_policy.h): this test binary,
// started again with --print-math-env, prints what use_fast_math_library_settings left.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_helpers.h"

namespace fs = std::filesystem;
using namespace yoke::test;

// OpenBLAS's idle threads sleep at once unless the user says otherwise: their polling had taken
// the cores from LibTorch's threads in training.
TEST(MathSettings, OpenBlasThreadsSleepAtOnceUnlessTold) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  EXPECT_NE(output_of({"env", "-u", "OPENBLAS_THREAD_TIMEOUT", self, "--print-math-env"}).find("OPENBLAS_THREAD_TIMEOUT=4\n"),
            std::string::npos);
  EXPECT_NE(output_of({"env", "OPENBLAS_THREAD_TIMEOUT=20", self, "--print-math-env"}).find("OPENBLAS_THREAD_TIMEOUT=20\n"),
            std::string::npos);
}

// The heap is kept and on huge pages (util/malloc_tunables.h) unless the user set GLIBC_TUNABLES.
TEST(MathSettings, TheHeapIsKeptUnlessTold) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  EXPECT_NE(output_of({"env", "-u", "GLIBC_TUNABLES", self, "--print-math-env"}).find("GLIBC_TUNABLES=glibc.malloc.hugetlb=1:"),
            std::string::npos);
  EXPECT_NE(output_of({"env", "GLIBC_TUNABLES=glibc.malloc.arena_max=2", self, "--print-math-env"})
                .find("GLIBC_TUNABLES=glibc.malloc.arena_max=2\n"),
            std::string::npos);
}
