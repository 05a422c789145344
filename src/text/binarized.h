// Tokenized corpora in a flat binary file that training loads in milliseconds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

// Sentence pairs as two flat token arrays with offsets (CSR layout): pair i's source is
// src_tokens[src_offsets[i] .. src_offsets[i+1]). For language modelling every target may be
// empty.
struct TokenizedCorpus {
  std::vector<int32_t> src_tokens, tgt_tokens;
  std::vector<uint64_t> src_offsets{0}, tgt_offsets{0};

  size_t size() const { return src_offsets.size() - 1; }
  void add(const std::vector<int>& src, const std::vector<int>& tgt);
  size_t src_len(size_t i) const { return src_offsets[i + 1] - src_offsets[i]; }
  size_t tgt_len(size_t i) const { return tgt_offsets[i + 1] - tgt_offsets[i]; }
  const int32_t* src(size_t i) const { return src_tokens.data() + src_offsets[i]; }
  const int32_t* tgt(size_t i) const { return tgt_tokens.data() + tgt_offsets[i]; }
};

// Writes atomically (path.tmp, fsync, rename): a crash never leaves a half-written file under
// `path`. Layout: magic, version, little-endian counts, offsets, tokens, CRC-32 of all before it.
void save_binarized(const std::string& path, const TokenizedCorpus& corpus);

// Throws InputError naming the file when it is missing, not a yoke corpus, of another version,
// truncated or inconsistent.
TokenizedCorpus load_binarized(const std::string& path);

// Throws InputError naming `path` when a token id is outside its vocabulary: data prepared with
// another vocabulary would otherwise fail deep inside training with no file named.
void check_token_ids(const TokenizedCorpus& corpus, int64_t src_vocab_size, int64_t tgt_vocab_size,
                     const std::string& path);

}  // namespace yoke
