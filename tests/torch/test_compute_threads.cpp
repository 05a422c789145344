// compat::set_compute_threads: `--threads N` must bound OpenBLAS's pool as well as LibTorch's. With
// LibTorch's alone, `translate --threads 1` ran its fp32 products on every core.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <vector>

#include "compat/torch.h"
#include "util/thread_policy.h"

using namespace yoke;

TEST(ComputeThreads, OneThreadIsOneInLibTorchsPoolAndInOpenBlass) {
  using GetThreads = int (*)();
  const auto blas_threads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (!blas_threads) GTEST_SKIP() << "the matrix products are not OpenBLAS's in this process";
  const int torch_before = at::get_num_threads(), blas_before = blas_threads();
  compat::set_compute_threads(1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(blas_threads(), 1);
  at::set_num_threads(torch_before);
  set_blas_threads(blas_before);
  EXPECT_EQ(blas_threads(), blas_before);
}

// yoke's own kernels (attention, log-softmax, layer norm) split their rows with at::parallel_for,
// which is inline: built without OpenMP it ran them on one thread whatever --threads said (fp32
// beam 4 on one batch and two threads gained 14% when it did not, docs/performance.md). The
// tests are compiled as yoke's library is (OpenMP is a PUBLIC dependency of it).
TEST(ComputeThreads, ParallelForInYokesCodeRunsOnEveryThreadAsked) {
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  std::vector<int> ran_on(64, -1);
  at::parallel_for(0, 64, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ran_on[size_t(i)] = at::get_thread_num();
  });
  at::set_num_threads(before);
  EXPECT_EQ(ran_on.front(), 0);
  EXPECT_EQ(ran_on.back(), 1) << "at::parallel_for ran every row on thread 0";
}
