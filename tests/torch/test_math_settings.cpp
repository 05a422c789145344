// The math-library settings a yoke program starts with (util/thread_policy.h): this test binary,
// started again with --print-math-env, prints what use_fast_math_library_settings left.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "cli_helpers.h"
#include "util/malloc_tunables.h"

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

// A worker thread keeps the heap it freed (util/malloc_tunables.h, top_pad). Under glibc's rules a
// block that opens a second heap in the thread's arena unmaps that heap when it is freed, so every
// decoding step of a second worker faulted its pages in again: 7 repeats cost 91 faults with
// yoke's other settings alone (2 MB pages), none with top_pad.
TEST(MathSettings, AWorkerThreadKeepsTheHeapItFreed) {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables == nullptr || std::string(tunables) != yoke::malloc_tunables_for("translate"))
    GTEST_SKIP() << "this process runs with GLIBC_TUNABLES=" << (tunables ? tunables : "(unset)") << ", not yoke's";
  long first = 0, later = 0;
  std::thread worker([&] {  // not the first thread: an arena of its own
    // 24 MB, under mmap_threshold: two such blocks fill most of the arena's first 64 MB heap, so
    // a third opens a second heap.
    constexpr size_t kBlock = 24u << 20;
    const auto faults = [] {
      rusage usage{};
      getrusage(RUSAGE_THREAD, &usage);
      return usage.ru_minflt;
    };
    void* a = std::malloc(kBlock);
    void* b = std::malloc(kBlock);
    std::memset(a, 1, kBlock);
    std::memset(b, 1, kBlock);
    for (int repeat = 0; repeat < 8; ++repeat) {
      const long before = faults();
      void* c = std::malloc(kBlock);
      std::memset(c, 1, kBlock);
      asm volatile("" : : "r"(c) : "memory");  // the block is used: no allocation is elided
      std::free(c);
      (repeat == 0 ? first : later) += faults() - before;
    }
    std::free(a);
    std::free(b);
  });
  worker.join();
  EXPECT_GT(first, 0) << "the block's first use faults its pages in";
  EXPECT_LT(later, first) << "7 repeats of a freed block faulted " << later << " times, its first use " << first;
}
