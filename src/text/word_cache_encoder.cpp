#include "text/word_cache_encoder.h"

#include <cstring>

namespace yoke {

void WordCacheEncoder::encode(const std::string& sentence, std::vector<int>& ids) {
  ids.clear();
  const char* p = sentence.data();
  const char* end = p + sentence.size();
  while (p < end) {
    const char* space = static_cast<const char*>(std::memchr(p, ' ', size_t(end - p)));
    const char* word_end = space ? space : end;
    if (word_end > p) {
      word_.assign(p, word_end);
      auto it = cache_.find(word_);
      if (it == cache_.end()) {
        ++misses_;
        if (cache_.size() >= max_words_) cache_.clear();
        it = cache_.emplace(word_, vocab_.encode(word_)).first;
      } else {
        ++hits_;
      }
      ids.insert(ids.end(), it->second.begin(), it->second.end());
    }
    p = word_end + 1;
  }
}

}  // namespace yoke
