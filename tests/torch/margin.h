// Thresholds that say how close they came. Each check below is an ordinary gtest expectation that
// also notes its margin: how many times over the observed value clears its threshold (the
// allowed difference over the observed one; the observed value over the required one). A
// listener (test_main.cpp) prints each test's smallest as
//   [  margin  ] Suite.Name 3.2 tests/torch/test_x.cpp:123
// so that scripts/test-numerics.sh --all can show, for every BLAS kernel family and thread count,
// which tests pass by a hair. A margin below 2 on any family is a test to fix: the next processor
// sums in yet another order.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "compat/torch.h"

namespace yoke::test {

// Keeps the smallest margin of the running test (and where it was taken).
void note_margin(double margin, const char* file, int line);

// |a − b| ≤ tol; margin tol / |a − b|.
struct NearCheck {
  const char* file;
  int line;
  ::testing::AssertionResult operator()(const char* ea, const char* eb, const char* et, double a, double b,
                                        double tol) const;
};

// Every element: |a − b| ≤ atol + rtol·|b| (at::allclose's rule, computed in double); margin
// the smallest of (atol + rtol·|b|) / |a − b|.
struct CloseCheck {
  const char* file;
  int line;
  ::testing::AssertionResult operator()(const char* ea, const char* eb, const char* er, const char* et,
                                        const at::Tensor& a, const at::Tensor& b, double rtol, double atol) const;
};

// x ≤ limit for x ≥ 0 (an error, a difference); margin limit / x.
struct AtMostCheck {
  const char* file;
  int line;
  ::testing::AssertionResult operator()(const char* ex, const char* el, double x, double limit) const;
};

// x ≥ floor with floor > 0 (a gain, a fraction learnt); margin x / floor.
struct AtLeastCheck {
  const char* file;
  int line;
  ::testing::AssertionResult operator()(const char* ex, const char* ef, double x, double floor) const;
};

// floor ≤ x ≤ best, where best is what a perfect result scores (30 of 30 copied): the shortfall
// best − x against the shortfall allowed, best − floor; margin (best − floor) / (best − x).
struct ShortfallCheck {
  const char* file;
  int line;
  ::testing::AssertionResult operator()(const char* ex, const char* ef, const char* eb, double x, double floor,
                                        double best) const;
};

}  // namespace yoke::test

#define YOKE_EXPECT_NEAR(a, b, tol) EXPECT_PRED_FORMAT3((::yoke::test::NearCheck{__FILE__, __LINE__}), a, b, tol)
#define YOKE_EXPECT_CLOSE(a, b, rtol, atol) \
  EXPECT_PRED_FORMAT4((::yoke::test::CloseCheck{__FILE__, __LINE__}), a, b, rtol, atol)
#define YOKE_EXPECT_AT_MOST(x, limit) EXPECT_PRED_FORMAT2((::yoke::test::AtMostCheck{__FILE__, __LINE__}), x, limit)
#define YOKE_EXPECT_AT_LEAST(x, floor) EXPECT_PRED_FORMAT2((::yoke::test::AtLeastCheck{__FILE__, __LINE__}), x, floor)
#define YOKE_EXPECT_SHORTFALL(x, floor, best) \
  EXPECT_PRED_FORMAT3((::yoke::test::ShortfallCheck{__FILE__, __LINE__}), x, floor, best)
