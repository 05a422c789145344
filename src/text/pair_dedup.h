// Remembers which sentence pairs were seen, for `yoke prepare --dedup`: for each distinct
// pair at most 32 bytes (a 64-bit hash in an open-addressing table kept a quarter to half full), so that tens
// of millions of pairs fit. Two different pairs share a hash with probability about n^2 / 2^65
// (4e-5 for 40M pairs): the cost of such a collision is one pair dropped that should have stayed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

class PairDedup {
 public:
  // True the first time a (src, tgt) pair is seen, false for every later time.
  bool first_time(const std::string& src, const std::string& tgt);
  size_t distinct() const { return used_; }

 private:
  void grow();
  std::vector<uint64_t> slots_;  // 0 marks an empty slot
  size_t used_ = 0;
};

}  // namespace yoke
