#include "decode/translator.h"

#include <algorithm>
#include <numeric>

#include "batch/batch.h"
#include "decode/parallel_batches.h"

namespace yoke {

namespace {

// Sorts the sources longest first (the slowest batches come early, so an ETA is honest; stable
// for ties), cuts them into batches of at most `budget` padded source tokens and calls
// `decode(batch tensor, indices)` on each, on `workers` threads on the CPU (run_batches);
// `on_batch(done)` reports progress in sentences.
void for_each_batch(Transformer& model, const std::vector<std::vector<int>>& sources, size_t budget, int workers,
                    const std::function<void(const at::Tensor&, const std::vector<size_t>&)>& decode,
                    const std::function<void(size_t)>& on_batch) {
  const bool was_training = model.is_training();
  model.eval();
  const auto device = model.parameters().front().device();
  std::vector<size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sources[a].size() > sources[b].size(); });
  std::vector<std::vector<size_t>> batches;
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    const size_t longest = sources[order[start]].size() + 1;
    while (end < order.size() && (end - start + 1) * longest <= budget) ++end;
    batches.emplace_back(order.begin() + long(start), order.begin() + long(end));
    start = end;
  }
  size_t done = 0;
  run_batches(
      batches.size(), device.is_cpu() ? workers : 1,
      [&](size_t b) { decode(make_source_tensor(sources, batches[b]).to(device), batches[b]); },
      [&](size_t b) {
        done += batches[b].size();
        if (on_batch) on_batch(done);
      });
  if (was_training) model.train();
}

}  // namespace

std::vector<std::vector<int>> translate_ids(Transformer& model, const std::vector<std::vector<int>>& sources,
                                            const SearchOptions& opts, int max_batch_tokens,
                                            const std::function<void(size_t)>& on_batch) {
  std::vector<std::vector<int>> out(sources.size());
  const size_t budget = size_t(std::max(1, max_batch_tokens / std::max(1, opts.beam)));
  for_each_batch(
      model, sources, budget, opts.workers,
      [&](const at::Tensor& src, const std::vector<size_t>& idx) {
        auto hyps = search(model, src, opts);
        for (size_t r = 0; r < idx.size(); ++r) out[idx[r]] = std::move(hyps[r]);
      },
      on_batch);
  return out;
}

std::vector<std::vector<Hypothesis>> translate_ids_nbest(Transformer& model, const std::vector<std::vector<int>>& sources,
                                                         const SearchOptions& opts, int nbest, int max_batch_tokens,
                                                         const std::function<void(size_t)>& on_batch) {
  std::vector<std::vector<Hypothesis>> out(sources.size());
  const size_t budget = size_t(std::max(1, max_batch_tokens / std::max(1, opts.beam)));
  for_each_batch(
      model, sources, budget, opts.workers,
      [&](const at::Tensor& src, const std::vector<size_t>& idx) {
        auto lists = beam_search_nbest(model, src, opts, nbest);
        for (size_t r = 0; r < idx.size(); ++r) out[idx[r]] = std::move(lists[r]);
      },
      on_batch);
  return out;
}

int default_batch_tokens(const Transformer& model) {
  return model.parameters().front().is_cuda() ? kGpuBatchTokens : kCpuBatchTokens;
}

std::vector<std::vector<int>> greedy_validation_decode(Transformer& model, const std::vector<std::vector<int>>& sources,
                                                       double max_len_a, int max_len_b) {
  SearchOptions so;
  so.beam = 1;
  so.max_len_a = max_len_a;
  so.max_len_b = max_len_b;
  return translate_ids(model, sources, so, default_batch_tokens(model));
}

}  // namespace yoke
