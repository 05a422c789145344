// util/thread_policy.h: which OpenBLAS kernels `yoke` runs with when OpenBLAS does not know the
// processor, which commands' OpenMP threads spin before they sleep, and which let OpenBLAS's
// threads sleep at once. The rules are pure; the re-execution around them is exercised by every
// torch test run (and MathSettings.*).
#include <gtest/gtest.h>

#include <string>

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
