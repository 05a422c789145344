// The torch tests' main: the math-library settings `yoke` itself runs with, and the margin report.
//
// The tests run under the kernels users get: on a processor newer than Debian's OpenBLAS knows,
// `yoke` switches from the generic kernels to SkylakeX's or Haswell's (util/thread_policy.h), and so do the
// tests, or they would test sums no user computes. scripts/test-numerics.sh sets
// OPENBLAS_CORETYPE itself to try the other families; a value that is set is kept.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

#include "model/int8_kernel.h"
#include "margin.h"
#include "util/thread_policy.h"

namespace yoke::test {

namespace {

struct Smallest {
  double margin = std::numeric_limits<double>::infinity();
  std::string where;
  bool any = false;
};
Smallest& running() {
  static Smallest s;
  return s;
}

std::string here(const char* file, int line) {
  std::string f = file;
  const auto cut = f.find("tests/");
  return (cut == std::string::npos ? f : f.substr(cut)) + ":" + std::to_string(line);
}

::testing::AssertionResult judged(double margin, const char* file, int line, const std::string& failure) {
  note_margin(margin, file, line);
  if (margin >= 1.0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failure << " (margin " << margin << ")";
}

// Prints each test's smallest margin when it ends (tests without a margin check print nothing).
class MarginPrinter : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { running() = Smallest{}; }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (!running().any) return;
    std::ostringstream line;
    line << "[  margin  ] " << info.test_suite_name() << "." << info.name() << " " << std::setprecision(3)
         << running().margin << " " << running().where;
    std::cout << line.str() << std::endl;
  }
};

}  // namespace

void note_margin(double margin, const char* file, int line) {
  auto& s = running();
  if (std::isnan(margin)) margin = 0;  // a NaN fails its check: as close as can be
  if (!s.any || margin < s.margin) s.margin = margin, s.where = here(file, line);
  s.any = true;
}

::testing::AssertionResult NearCheck::operator()(const char* ea, const char* eb, const char* et, double a, double b,
                                                 double tol) const {
  const double diff = std::fabs(a - b);
  const double margin = diff == 0 ? std::numeric_limits<double>::infinity() : tol / diff;
  std::ostringstream why;
  why << std::setprecision(9) << "|" << ea << " - " << eb << "| = " << diff << " exceeds " << et << " = " << tol
      << " (" << a << " against " << b << ")";
  return judged(margin, file, line, why.str());
}

::testing::AssertionResult CloseCheck::operator()(const char* ea, const char* eb, const char*, const char*,
                                                  const at::Tensor& a, const at::Tensor& b, double rtol,
                                                  double atol) const {
  if (a.sizes() != b.sizes())
    return ::testing::AssertionFailure() << ea << " and " << eb << " differ in shape: " << a.sizes() << " against "
                                         << b.sizes();
  const auto x = a.detach().to(at::kCPU).to(at::kDouble), y = b.detach().to(at::kCPU).to(at::kDouble);
  const auto diff = (x - y).abs();
  const auto allowed = y.abs() * rtol + atol;
  // Elements that are equal have an infinite margin, whatever their allowance (0 included).
  const auto ratio = at::where(diff.eq(0), at::full_like(diff, std::numeric_limits<double>::infinity()),
                               allowed / diff);
  const double margin = ratio.numel() ? ratio.min().item<double>() : std::numeric_limits<double>::infinity();
  std::ostringstream why;
  why << std::setprecision(6) << ea << " and " << eb << " differ by up to " << diff.max().item<double>()
      << " where rtol " << rtol << ", atol " << atol << " allow";
  return judged(margin, file, line, why.str());
}

::testing::AssertionResult AtMostCheck::operator()(const char* ex, const char* el, double x, double limit) const {
  const double margin = x <= 0 ? std::numeric_limits<double>::infinity() : limit / x;
  std::ostringstream why;
  why << std::setprecision(9) << ex << " = " << x << " exceeds " << el << " = " << limit;
  return judged(margin, file, line, why.str());
}

::testing::AssertionResult AtLeastCheck::operator()(const char* ex, const char* ef, double x, double floor) const {
  const double margin = x / floor;
  std::ostringstream why;
  why << std::setprecision(9) << ex << " = " << x << " is below " << ef << " = " << floor;
  return judged(margin, file, line, why.str());
}

::testing::AssertionResult ShortfallCheck::operator()(const char* ex, const char* ef, const char* eb, double x,
                                                      double floor, double best) const {
  const double margin = x >= best ? std::numeric_limits<double>::infinity() : (best - floor) / (best - x);
  std::ostringstream why;
  why << std::setprecision(9) << ex << " = " << x << " is below " << ef << " = " << floor << " (at best " << eb
      << " = " << best << ")";
  return judged(margin, file, line, why.str());
}

}  // namespace yoke::test

// --skip-code=N (CTest's registration, cmake/add_test_suites.cmake): exit with N when every test
// that ran was skipped (no GPU, no data), so that CTest reports a skip, not a pass.
// --print-math-env prints the settings it runs with as NAME=VALUE lines and runs nothing:
// scripts/test.sh exports them, so that each of CTest's processes starts once, not twice.
// The int8 kernel is pinned for the tests and the `yoke` processes they start (YOKE_INT8_KERNEL,
// unless set): `yoke` measures which is fastest (model/int8_kernel.h), and a choice that moved
// with the machine's load would change the numbers the tests' tolerances were calibrated on.
// int8 where the build or LibTorch has an int8 product (the kernel `yoke` measures fastest on the
// machines tried), else bf16: the kernels the all-kernels sweep has measured the margins of
// (docs/testing.md). Int8.* tests each kernel by name.
int main(int argc, char** argv) {
  yoke::use_fast_math_library_settings(argv);
  if (!std::getenv("YOKE_INT8_KERNEL"))
    ::setenv("YOKE_INT8_KERNEL",
             yoke::int8_kernel_available(yoke::Int8Kernel::int8)   ? "int8"
             : yoke::int8_kernel_available(yoke::Int8Kernel::bf16) ? "bf16"
                                                                   : "fp32",
             1);
  // fp32 models likewise decode with at::linear in the tests (their reference numbers, PyTorch's
  // and ONNX Runtime's included, come from it); Fp32Kernel.* and Fp32Decoding.* test oneDNN's.
  if (!std::getenv("YOKE_FP32_KERNEL")) ::setenv("YOKE_FP32_KERNEL", "openblas", 1);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--print-math-env") {
      for (const char* name : {"OMP_WAIT_POLICY", "OPENBLAS_CORETYPE", "OPENBLAS_THREAD_TIMEOUT", "DNNL_MAX_CPU_ISA", "YOKE_INT8_KERNEL", "YOKE_FP32_KERNEL",
                                 "GLIBC_TUNABLES"})
        if (const char* value = std::getenv(name)) std::cout << name << "=" << value << "\n";
      return 0;
    }
  ::testing::InitGoogleTest(&argc, argv);
  int skip_code = -1;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--skip-code=", 0) == 0) skip_code = std::stoi(argv[i] + 12);
  ::testing::UnitTest::GetInstance()->listeners().Append(new yoke::test::MarginPrinter);
  const int rc = RUN_ALL_TESTS();
  const auto& u = *::testing::UnitTest::GetInstance();
  if (rc == 0 && skip_code >= 0 && u.successful_test_count() == 0 && u.skipped_test_count() > 0) return skip_code;
  return rc;
}
