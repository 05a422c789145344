#include "model/product_rows.h"

#include <stdexcept>

namespace yoke {

std::vector<int64_t> product_row_chunks(int64_t rows, int64_t most) {
  if (rows < 0 || most < 2) throw std::invalid_argument("product_row_chunks: rows ≥ 0 and most ≥ 2 expected");
  if (rows <= most) return rows > 0 ? std::vector<int64_t>{rows} : std::vector<int64_t>{};
  const int64_t whole = rows / most, rest = rows % most;
  std::vector<int64_t> chunks(size_t(whole), most);
  if (rest >= most / 2) {
    chunks.push_back(rest);
  } else if (rest > 0) {  // the last whole call and the rest, as two calls of at least most/2
    chunks.back() = (most + rest + 1) / 2;
    chunks.push_back(most + rest - chunks.back());
  }
  return chunks;
}

}  // namespace yoke
