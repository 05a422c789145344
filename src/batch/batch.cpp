#include "batch/batch.h"

#include <algorithm>

#include "text/vocab.h"

namespace yoke {

Batch make_batch(const TokenizedCorpus& c, const std::vector<uint32_t>& idx) {
  const int64_t n = static_cast<int64_t>(idx.size());
  size_t max_s = 0, max_t = 0;
  for (uint32_t i : idx) { max_s = std::max(max_s, c.src_len(i)); max_t = std::max(max_t, c.tgt_len(i)); }
  Batch b;
  b.src = at::zeros({n, int64_t(max_s) + 1}, at::kLong);
  b.tgt_in = at::zeros({n, int64_t(max_t) + 1}, at::kLong);
  b.tgt_out = at::zeros({n, int64_t(max_t) + 1}, at::kLong);
  auto s = b.src.accessor<int64_t, 2>();
  auto ti = b.tgt_in.accessor<int64_t, 2>();
  auto to = b.tgt_out.accessor<int64_t, 2>();
  for (int64_t r = 0; r < n; ++r) {
    const uint32_t i = idx[r];
    const size_t ls = c.src_len(i), lt = c.tgt_len(i);
    for (size_t j = 0; j < ls; ++j) s[r][j] = c.src(i)[j];
    s[r][ls] = Vocab::eos;
    ti[r][0] = Vocab::bos;
    for (size_t j = 0; j < lt; ++j) { ti[r][j + 1] = c.tgt(i)[j]; to[r][j] = c.tgt(i)[j]; }
    to[r][lt] = Vocab::eos;
    b.src_tokens += int64_t(ls) + 1;
    b.tgt_tokens += int64_t(lt) + 1;
  }
  return b;
}

at::Tensor make_source_tensor(const std::vector<std::vector<int>>& sentences, const std::vector<size_t>& idx) {
  size_t max_s = 0;
  for (size_t i : idx) max_s = std::max(max_s, sentences[i].size());
  auto t = at::zeros({int64_t(idx.size()), int64_t(max_s) + 1}, at::kLong);
  auto a = t.accessor<int64_t, 2>();
  for (size_t r = 0; r < idx.size(); ++r) {
    const auto& s = sentences[idx[r]];
    for (size_t j = 0; j < s.size(); ++j) a[r][j] = s[j];
    a[r][s.size()] = Vocab::eos;
  }
  return t;
}

std::vector<uint32_t> source_lengths(const TokenizedCorpus& c) {
  std::vector<uint32_t> out(c.size());
  for (size_t i = 0; i < c.size(); ++i) out[i] = uint32_t(c.src_len(i) + 1);
  return out;
}

std::vector<uint32_t> target_lengths(const TokenizedCorpus& c) {
  std::vector<uint32_t> out(c.size());
  for (size_t i = 0; i < c.size(); ++i) out[i] = uint32_t(c.tgt_len(i) + 1);
  return out;
}

Batch batch_to_device(Batch b, const at::Device& device) {
  b.keep = b.tgt_out.reshape({-1}).ne(Vocab::pad).nonzero().squeeze(1);
  if (device.is_cpu()) return b;
  for (at::Tensor* t : {&b.src, &b.tgt_in, &b.tgt_out, &b.keep})
    if (t->defined()) *t = t->pin_memory().to(device, /*non_blocking=*/true);
  return b;
}

}  // namespace yoke
