#include "decode/batched_decoding.h"

#include <algorithm>
#include <numeric>

#include "batch/batch.h"
#include "decode/parallel_batches.h"

namespace yoke {

namespace {

// Sorts the sources longest first (the slowest batches come early, so an ETA is honest; stable
// for ties), cuts them into batches of at most `budget` padded source tokens and calls
// `decode(batch tensor, indices)` on each, on `workers` threads on the CPU (run_batches);
// `on_batch(done, indices)` follows each batch, one call at a time (done: sentences so far).
void for_each_batch(const Ensemble& model, const std::vector<std::vector<int>>& sources, size_t budget, int workers,
                    const std::function<void(const at::Tensor&, const std::vector<size_t>&)>& decode,
                    const std::function<void(size_t, const std::vector<size_t>&)>& on_batch) {
  std::vector<bool> was_training;
  for (auto* m : model.models) {
    was_training.push_back(m->is_training());
    m->eval();
  }
  const auto device = model.first().parameters().front().device();
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
        if (on_batch) on_batch(done, batches[b]);
      });
  for (size_t m = 0; m < model.size(); ++m)
    if (was_training[m]) model.models[m]->train();
}

}  // namespace

std::vector<std::vector<int>> translate_ids(const Ensemble& model, const std::vector<std::vector<int>>& sources,
                                            const SearchOptions& opts, int max_batch_tokens,
                                            const std::function<void(size_t)>& on_batch,
                                            const ResultsReady<std::vector<int>>& on_results) {
  std::vector<std::vector<int>> out(sources.size());
  if (opts.sampling != Sampling::none) {  // the search cannot sample: one drawn hypothesis each
    TranslateExtras extras;
    extras.on_results = [&](const std::vector<size_t>& idx, const std::vector<std::vector<Hypothesis>>& lists) {
      for (size_t i : idx) out[i] = lists[i].front().tokens;
      if (on_results) on_results(idx, out);
    };
    translate_ids_nbest(model, sources, opts, 1, max_batch_tokens, on_batch, extras);
    return out;
  }
  const size_t budget = size_t(std::max(1, max_batch_tokens / std::max(1, opts.beam)));
  for_each_batch(
      model, sources, budget, opts.workers,
      [&](const at::Tensor& src, const std::vector<size_t>& idx) {
        auto hyps = search(model, src, opts);
        for (size_t r = 0; r < idx.size(); ++r) out[idx[r]] = std::move(hyps[r]);
      },
      [&](size_t done, const std::vector<size_t>& idx) {
        if (on_results) on_results(idx, out);
        if (on_batch) on_batch(done);
      });
  return out;
}

std::vector<std::vector<Hypothesis>> translate_ids_nbest(const Ensemble& model, const std::vector<std::vector<int>>& sources,
                                                         const SearchOptions& opts, int nbest, int max_batch_tokens,
                                                         const std::function<void(size_t)>& on_batch,
                                                         const TranslateExtras& extras) {
  if (extras.guides && extras.guides->size() != sources.size())
    throw std::logic_error("translate_ids_nbest: one guide per source");
  std::vector<std::vector<Hypothesis>> out(sources.size());
  const bool sampling = opts.sampling != Sampling::none;
  const size_t budget = size_t(std::max(1, max_batch_tokens / (sampling ? 1 : std::max(1, opts.beam))));
  for_each_batch(
      model, sources, budget, opts.workers,
      [&](const at::Tensor& src, const std::vector<size_t>& idx) {
        std::vector<Row> rows;
        bool guided = false;
        for (size_t i : idx) {
          const TargetGuide* g = extras.guides && !(*extras.guides)[i].empty() ? &(*extras.guides)[i] : nullptr;
          guided = guided || g;
          rows.push_back({extras.first_index + i, g});
        }
        auto lists = sampling ? sample_search(model, src, opts, rows)
                              : beam_search_nbest(model, src, opts, nbest, guided ? rows : std::vector<Row>{});
        for (size_t r = 0; r < idx.size(); ++r) out[idx[r]] = std::move(lists[r]);
      },
      [&](size_t done, const std::vector<size_t>& idx) {
        if (extras.on_results) extras.on_results(idx, out);
        if (on_batch) on_batch(done);
      });
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
