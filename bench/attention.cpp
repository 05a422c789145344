// Single-query attention (model/single_query_attention.h) at a beam-4 decoding step's shapes:
// nanoseconds per (row, head, key), the best of 3 rounds of REPS calls, one thread.
//   cross  each row reads its sentence's memory (the 4 hypotheses of a sentence share one row)
//   self   each row reads its positions from the 4 rows of its beam, as a cache in a room does
//          after beam search has reordered it (model/attention.h, KeyValues::position_rows)
// Random keys and values; 4 heads of 64 (the reference model's d 256).
//   yoke_bench_attention [SENTENCES=300] [POSITIONS=14] [REPS=20]
// Few sentences keep every key in the processor's caches: the difference from many is what
// memory costs; the rest is the kernel's own arithmetic.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compat/torch.h"
#include "model/single_query_attention.h"

int main(int argc, char** argv) {
  at::set_num_threads(1);
  at::NoGradGuard no_grad;
  const int64_t sentences = argc > 1 ? std::atoll(argv[1]) : 300, len = argc > 2 ? std::atoll(argv[2]) : 14;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
  constexpr int64_t beam = 4, heads = 4, dh = 64;
  if (sentences < 1 || len < 1 || reps < 1) {
    std::fprintf(stderr, "usage: yoke_bench_attention [SENTENCES] [POSITIONS] [REPS], each at least 1\n");
    return 2;
  }
  const int64_t rows = sentences * beam, room = (len + 15) / 16 * 16;
  at::manual_seed(1);
  const auto q = at::randn({rows, 1, heads * dh});
  const auto k = at::randn({sentences, heads, len, dh}), v = at::randn({sentences, heads, len, dh});
  std::vector<int64_t> memory_rows;
  for (int64_t b = 0; b < rows; ++b) memory_rows.push_back(b / beam);
  const auto k_room = at::randn({rows, heads, room, dh}), v_room = at::randn({rows, heads, room, dh});
  std::vector<int64_t> position_rows(static_cast<size_t>(rows * room), 0);
  for (int64_t b = 0; b < rows; ++b)  // position t of row b from one of its beam's rows, varying with t
    for (int64_t t = 0; t < len; ++t) position_rows[size_t(b * room + t)] = b / beam * beam + (t * 7 + b) % beam;
  const yoke::PositionRows positions{position_rows.data(), room};
  const auto ks = k_room.narrow(2, 0, len), vs = v_room.narrow(2, 0, len);

  double cross = 1e30, self = 1e30;
  for (int round = 0; round < 3; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) yoke::single_query_attention(q, k, v, at::Tensor(), heads, memory_rows);
    const auto t1 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) yoke::single_query_attention(q, ks, vs, at::Tensor(), heads, {}, &positions);
    const auto t2 = std::chrono::steady_clock::now();
    const double keys = double(reps) * double(rows * heads * len);
    cross = std::min(cross, std::chrono::duration<double, std::nano>(t1 - t0).count() / keys);
    self = std::min(self, std::chrono::duration<double, std::nano>(t2 - t1).count() / keys);
  }
  std::printf("%lld sentences × %lld hypotheses, %lld positions, %lld heads of %lld: cross %.2f ns, self %.2f ns a (row, head, key)\n",
              static_cast<long long>(sentences), static_cast<long long>(beam), static_cast<long long>(len),
              static_cast<long long>(heads), static_cast<long long>(dh), cross, self);
}
