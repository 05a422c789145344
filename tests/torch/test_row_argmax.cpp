// decode/row_argmax.h against at::argmax(-1): the same index on every row, ties and NaN included
// (an index, not a float: equality is exact).
#include <gtest/gtest.h>

#include <limits>

#include "decode/row_argmax.h"

using namespace yoke;

namespace {

std::vector<int64_t> torch_argmax(const at::Tensor& s) {
  const auto i = s.argmax(-1).contiguous();
  return std::vector<int64_t>(i.data_ptr<int64_t>(), i.data_ptr<int64_t>() + i.numel());
}

}  // namespace

TEST(RowArgmax, MatchesAtArgmaxOnEveryLengthTiesAndNaN) {
  at::manual_seed(5);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {1, 2, 15, 16, 17, 31, 32, 33, 100, 8000}) {
    auto s = at::randn({12, n});
    // Row 1: ties at a few places (the first wins); row 2: all −inf; row 3: the maximum last;
    // rows 4–5: a NaN (it wins), before and after the maximum; row 6: +inf twice.
    s[1].copy_(at::randint(0, 3, {n}).to(at::kFloat));
    s[2].fill_(-inf);
    s[3][n - 1] = 100;
    s[4][n / 2] = nan;
    s[5][0] = 50, s[5][n - 1] = nan;
    s[6][n / 3] = inf, s[6][n - 1] = inf;
    // Rows 7–11 random, row 11 with pad and bos ruled out as the search does.
    s[11].narrow(0, 0, std::min<int64_t>(2, n)).fill_(-inf);
    EXPECT_EQ(row_argmax(s), torch_argmax(s)) << "V " << n;
    EXPECT_EQ(row_argmax(s.t().contiguous().t()), torch_argmax(s)) << "V " << n << ", a strided view";
  }
}

TEST(RowArgmax, OtherTypesGoThroughLibTorch) {
  const auto s = at::randn({4, 50}).to(at::kDouble);
  EXPECT_EQ(row_argmax(s), torch_argmax(s));
  EXPECT_THROW(row_argmax(at::randn({5})), c10::Error);
}
