// compat::set_compute_threads: `--threads N` must bound OpenBLAS's pool as well as LibTorch's. With
// LibTorch's alone, `translate --threads 1` ran its fp32 products on every core.
#include <dlfcn.h>
#include <gtest/gtest.h>

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
