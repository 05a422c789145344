// How yoke's fp32 product on oneDNN (model/fp32_matmul.h) cuts a call's rows into calls of
// primitives made for exact row counts:
//   rows ≤ most                 one call of `rows` rows
//   rows = q·most + r, r = 0     q calls of `most`
//   r ≥ most/2                   q calls of `most`, one of r
//   0 < r < most/2               q − 1 calls of `most`, and most + r split into two near halves
// No call is padded with zero rows: padding to model/int8_linear.h's row buckets had cost 9% of
// fp32 beam-4 decoding and 4% of greedy (bench/decode_ab.sh, one thread). Every call has at least
// most/2 rows once rows > most (small calls run far below the processor's peak), and a process
// makes at most `most` primitives per weight shape (oneDNN's matmul primitives take ~55 KB each).
// The int8 product keeps its buckets: cutting gained nothing measurable there.
#pragma once
#include <cstdint>
#include <vector>

namespace yoke {

constexpr int64_t kMostRowsPerProduct = 128;

// The row counts of the calls, in order; they sum to `rows` (none for 0 rows).
std::vector<int64_t> product_row_chunks(int64_t rows, int64_t most = kMostRowsPerProduct);

}  // namespace yoke
