#include "text/pair_dedup.h"

#include <functional>
#include <string_view>

namespace yoke {
namespace {

// splitmix64's finalizer: spreads the bits of a combined hash over the whole word.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

bool PairDedup::first_time(const std::string& src, const std::string& tgt) {
  const std::hash<std::string_view> h;
  // Each side hashed apart and combined unevenly, so ("a b", "c") and ("a", "b c") differ.
  uint64_t key = mix(h(src) ^ mix(h(tgt) + 0x9e3779b97f4a7c15ull));
  if (key == 0) key = 1;
  if ((used_ + 1) * 2 > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = key & mask;; i = (i + 1) & mask) {
    if (slots_[i] == key) return false;
    if (slots_[i] == 0) {
      slots_[i] = key;
      ++used_;
      return true;
    }
  }
}

void PairDedup::grow() {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, 0);
  const size_t mask = slots_.size() - 1;
  for (uint64_t key : old) {
    if (key == 0) continue;
    size_t i = key & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = key;
  }
}

}  // namespace yoke
