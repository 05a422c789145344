// The products a kernel measurement times (model/int8_kernel.h, model/fp32_kernel.h): the model's
// own matrices at row counts a decoding step meets, each matrix at each count. Calls over
// kMaxTimedMacs multiply-adds are left out but at the first count: a large output matrix at many
// rows would make the measurement longer than a short translation.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace yoke {

constexpr double kMaxTimedMacs = 1.6e7;

struct TimedCall {
  size_t matrix;  // index into the shapes
  int64_t rows;
};

// shapes: each matrix's (N, K); rows: ascending.
inline std::vector<TimedCall> timed_calls(const std::vector<std::pair<int64_t, int64_t>>& shapes,
                                          const std::vector<int64_t>& rows) {
  std::vector<TimedCall> calls;
  for (size_t i = 0; i < shapes.size(); ++i)
    for (int64_t r : rows)
      if (r == rows.front() || double(r) * double(shapes[i].first) * double(shapes[i].second) <= kMaxTimedMacs)
        calls.push_back({i, r});
  return calls;
}

}  // namespace yoke
