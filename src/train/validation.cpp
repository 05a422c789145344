#include "train/validation.h"

#include <algorithm>

#include "batch/batching.h"
#include "eval/bleu.h"
#include "model/transformer.h"
#include "train/collectives.h"
#include "train/process_group.h"

namespace yoke {

ValidResult validate(Transformer& model, const ValidationSet& set, const Config& cfg, const at::Device& device,
                     ProcessGroup* group, const BatchPrefetch::Make& make_batch, const ValidationDecoder& decode) {
  const size_t rank = size_t(group ? group->rank() : 0), world = size_t(group ? group->size() : 1);
  at::NoGradGuard no_grad;
  model.eval();
  ValidResult r;
  at::Tensor sums = at::zeros({3}, at::kDouble);  // loss, nll, tokens
  const auto batches = make_token_batches(set.src_lengths, set.tgt_lengths, size_t(cfg.max_tokens), false, 0);
  for (size_t i = rank; i < batches.size(); i += world) {
    auto out = forward_loss(model, make_batch(batches[i]), device, cfg);
    sums[0] += out.loss.item<double>();
    sums[1] += out.nll.item<double>();
    sums[2] += double(out.tokens);
  }
  sum_over_ranks(group, sums);
  const double tokens = std::max(1.0, sums[2].item<double>());
  r.loss = sums[0].item<double>() / tokens / std::log(2.0);
  r.nll = sums[1].item<double>() / tokens / std::log(2.0);
  if (cfg.valid_bleu && decode && !set.refs.empty()) {
    const TokenizedCorpus& c = set.corpus;
    size_t n = c.size();
    if (cfg.valid_bleu_sentences > 0) n = std::min(n, size_t(cfg.valid_bleu_sentences));
    std::vector<size_t> mine;
    for (size_t i = rank; i < n; i += world) mine.push_back(i);
    std::vector<std::vector<int>> sources(mine.size());
    for (size_t k = 0; k < mine.size(); ++k) sources[k].assign(c.src(mine[k]), c.src(mine[k]) + c.src_len(mine[k]));
    auto hyps_ids = decode(model, sources, cfg.max_len_a, cfg.max_len_b);
    BleuStats stats;
    for (size_t k = 0; k < mine.size(); ++k)
      stats += bleu_sentence_stats(set.tgt_vocab.decode(hyps_ids[k]), set.refs[mine[k]], false);
    at::Tensor counts = at::zeros({10}, at::kLong);
    for (int j = 0; j < 4; ++j) counts[j] = stats.matches[size_t(j)], counts[4 + j] = stats.totals[size_t(j)];
    counts[8] = stats.sys_len;
    counts[9] = stats.ref_len;
    sum_over_ranks(group, counts);
    for (int j = 0; j < 4; ++j)
      stats.matches[size_t(j)] = counts[j].item<int64_t>(), stats.totals[size_t(j)] = counts[4 + j].item<int64_t>();
    stats.sys_len = counts[8].item<int64_t>();
    stats.ref_len = counts[9].item<int64_t>();
    r.bleu = bleu_from_stats(stats).score;
  }
  model.train();
  return r;
}

}  // namespace yoke
