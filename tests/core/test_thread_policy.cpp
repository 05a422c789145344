// util/thread_policy.h: which OpenBLAS kernels `yoke` runs with when OpenBLAS does not know the
// processor, which commands' OpenMP threads spin before they sleep, and which let OpenBLAS's
// threads sleep at once. The rules are pure; the re-execution around them is exercised by every
// torch test run (and MathSettings.*), the starter by Starter.*.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "scoped_env.h"
#include "util/malloc_tunables.h"
#include "util/thread_policy.h"

using namespace yoke;

namespace {
std::string or_keep(const char* k) { return k ? k : "(keep)"; }
}  // namespace

TEST(ThreadPolicy, OnlyTheGenericKernelsAreReplacedAndByTheWidestTheProcessorRuns) {
  // OpenBLAS fell back to its generic kernels: AVX-512 → SkylakeX, AVX2+FMA → Haswell, else keep.
  EXPECT_EQ(or_keep(blas_kernels_to_use("Prescott", true, true)), "SkylakeX");
  EXPECT_EQ(or_keep(blas_kernels_to_use("PRESCOTT", false, true)), "Haswell");
  EXPECT_EQ(or_keep(blas_kernels_to_use("Prescott", false, false)), "(keep)");
  // A processor OpenBLAS knows keeps its own choice, whatever its flags.
  EXPECT_EQ(or_keep(blas_kernels_to_use("Cooperlake", true, true)), "(keep)");
  EXPECT_EQ(or_keep(blas_kernels_to_use("Haswell", true, true)), "(keep)");
  EXPECT_EQ(or_keep(blas_kernels_to_use("Zen", false, true)), "(keep)");
  // Products not by OpenBLAS: nothing to choose.
  EXPECT_EQ(or_keep(blas_kernels_to_use("", true, true)), "(keep)");
  EXPECT_EQ(or_keep(blas_kernels_to_use(nullptr, true, true)), "(keep)");
}

TEST(ThreadPolicy, OnlyTheDecodingCommandsSpinBeforeTheySleep) {
  for (const char* decoding : {"translate", "serve", "generate"}) EXPECT_EQ(or_keep(openmp_spin_count_for(decoding)), "10000") << decoding;
  // Training shares the cores with OpenBLAS's own pool; the rest decode little or nothing.
  for (const char* other : {"train", "experiment", "score", "quantize", "export", "--help", "translatex", ""})
    EXPECT_EQ(or_keep(openmp_spin_count_for(other)), "(keep)") << other;
  EXPECT_EQ(or_keep(openmp_spin_count_for(nullptr)), "(keep)");
}

TEST(ThreadPolicy, OpenBlasThreadsSleepAtOnceExceptInTheDecodingCommands) {
  // Decoding multiplies a few rows at a time, where waking a sleeping thread would cost more.
  for (const char* decoding : {"translate", "serve", "generate"})
    EXPECT_EQ(or_keep(blas_thread_timeout_for(decoding)), "(keep)") << decoding;
  // Training (and everything else, the test binaries and benches included) lets them sleep.
  for (const char* other : {"train", "experiment", "score", "--help", "translatex", ""})
    EXPECT_EQ(or_keep(blas_thread_timeout_for(other)), "4") << other;
  EXPECT_EQ(or_keep(blas_thread_timeout_for(nullptr)), "4");
}

namespace {
int chosen_calls = 0;
const char* openblas_fell_back() {
  ++chosen_calls;
  return "Prescott";
}
}  // namespace

// What the starter (src/starter/) and use_fast_math_library_settings set: the variables the user
// left unset, and the names of those the libraries read while they load, so that a program started
// with them has nothing left to set and starts once.
TEST(ThreadPolicy, TheEnvironmentIsSetWhereTheUserLeftItAndOnlyOnce) {
  const char* names[] = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_CORETYPE", "OPENBLAS_THREAD_TIMEOUT",
                         "GLIBC_TUNABLES", "DNNL_MAX_CPU_ISA"};
  std::vector<std::unique_ptr<test::ScopedEnv>> unset;  // each restored when the test ends
  for (const char* name : names) unset.push_back(std::make_unique<test::ScopedEnv>(name, nullptr));
  const bool replaceable = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");  // see blas_kernels_to_use
  const auto joined = [](const std::vector<const char*>& set) {
    std::string s;
    for (const char* name : set) s += std::string(s.empty() ? "" : " ") + name;
    return s;
  };

  auto set = set_math_library_environment("translate", openblas_fell_back);
  EXPECT_EQ(joined(set), replaceable ? "OMP_WAIT_POLICY GOMP_SPINCOUNT OPENBLAS_CORETYPE GLIBC_TUNABLES"
                                     : "OMP_WAIT_POLICY GOMP_SPINCOUNT GLIBC_TUNABLES");
  EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "PASSIVE");
  EXPECT_STREQ(std::getenv("GOMP_SPINCOUNT"), openmp_spin_count_for("translate"));
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), malloc_tunables_for("translate"));
  EXPECT_STREQ(std::getenv("DNNL_MAX_CPU_ISA"), kOneDnnMaxIsa);
  EXPECT_EQ(std::getenv("OPENBLAS_THREAD_TIMEOUT"), nullptr) << "decoding keeps OpenBLAS's own";
  // Started again with them: nothing left to set, and OpenBLAS is not asked again.
  const int calls = chosen_calls;
  EXPECT_EQ(joined(set_math_library_environment("translate", openblas_fell_back)), "");
  EXPECT_EQ(chosen_calls, calls);

  // Values the user set are kept; GOMP_SPINCOUNT only comes with yoke's own wait policy.
  for (const char* name : names) ::unsetenv(name);
  ::setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2", 1);
  ::setenv("OPENBLAS_CORETYPE", "Zen", 1);
  set = set_math_library_environment("train", openblas_fell_back);
  EXPECT_EQ(joined(set), "OPENBLAS_THREAD_TIMEOUT");
  EXPECT_STREQ(std::getenv("OMP_WAIT_POLICY"), "ACTIVE");
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT"), nullptr);
  EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.arena_max=2");
  EXPECT_STREQ(std::getenv("OPENBLAS_CORETYPE"), "Zen");
  EXPECT_STREQ(std::getenv("OPENBLAS_THREAD_TIMEOUT"), "4");
  EXPECT_EQ(chosen_calls, calls) << "OpenBLAS is asked only when OPENBLAS_CORETYPE is unset";
}
