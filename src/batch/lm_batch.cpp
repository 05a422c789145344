#include "batch/lm_batch.h"

#include <algorithm>

#include "text/vocab.h"
#include "util/error.h"

namespace yoke {

int lm_start_token(bool blocks) { return blocks ? Vocab::eos : Vocab::bos; }

TokenizedCorpus stream_blocks(const TokenizedCorpus& sentences, int64_t block) {
  if (block < 1) throw InputError("lm_block must be at least 1");
  std::vector<int> stream{Vocab::eos};
  stream.reserve(sentences.tgt_tokens.size() + sentences.size() + 1);
  for (size_t i = 0; i < sentences.size(); ++i) {
    stream.insert(stream.end(), sentences.tgt(i), sentences.tgt(i) + sentences.tgt_len(i));
    stream.push_back(Vocab::eos);
  }
  TokenizedCorpus out;
  for (size_t start = 0; start + 1 < stream.size(); start += size_t(block)) {
    const size_t end = std::min(stream.size(), start + size_t(block) + 1);
    out.add({}, std::vector<int>(stream.begin() + int64_t(start), stream.begin() + int64_t(end)));
  }
  return out;
}

Batch make_lm_batch(const TokenizedCorpus& c, const std::vector<uint32_t>& idx, bool blocks) {
  const int64_t n = int64_t(idx.size());
  const auto lengths = [&](uint32_t i) { return int64_t(c.tgt_len(i)) + (blocks ? -1 : 1); };
  int64_t width = 0;
  for (uint32_t i : idx) width = std::max(width, lengths(i));
  Batch b;
  b.tgt_in = at::zeros({n, width}, at::kLong);
  b.tgt_out = at::zeros({n, width}, at::kLong);
  auto in = b.tgt_in.accessor<int64_t, 2>();
  auto out = b.tgt_out.accessor<int64_t, 2>();
  for (int64_t r = 0; r < n; ++r) {
    const uint32_t i = idx[size_t(r)];
    const int32_t* t = c.tgt(i);
    const int64_t len = int64_t(c.tgt_len(i));
    if (blocks) {
      for (int64_t j = 0; j + 1 < len; ++j) { in[r][j] = t[j]; out[r][j] = t[j + 1]; }
    } else {
      in[r][0] = Vocab::bos;
      for (int64_t j = 0; j < len; ++j) { in[r][j + 1] = t[j]; out[r][j] = t[j]; }
      out[r][len] = Vocab::eos;
    }
    b.tgt_tokens += lengths(i);
  }
  return b;
}

std::vector<uint32_t> lm_lengths(const TokenizedCorpus& c, bool blocks) {
  std::vector<uint32_t> out(c.size());
  for (size_t i = 0; i < c.size(); ++i) out[i] = uint32_t(int64_t(c.tgt_len(i)) + (blocks ? -1 : 1));
  return out;
}

}  // namespace yoke
