#include "decode/batched_decoding.h"

#include <algorithm>

#include "batch/batch.h"
#include "decode/batch_loop.h"

namespace yoke {

std::vector<std::vector<int>> translate_ids(const Ensemble& model, const std::vector<std::vector<int>>& sources,
                                            const SearchOptions& opts, int max_batch_tokens,
                                            const std::function<void(size_t)>& on_batch,
                                            const ResultsReady<std::vector<int>>& on_results) {
  std::vector<std::vector<int>> out(sources.size());
  if (max_batch_tokens <= 0) max_batch_tokens = default_batch_tokens(model.first(), opts);
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
      model, source_lengths(sources), budget, opts.workers,
      [&](const std::vector<size_t>& idx, const at::Device& device) {
        const auto src = make_source_tensor(sources, idx).to(device);
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
  if (max_batch_tokens <= 0) max_batch_tokens = default_batch_tokens(model.first(), opts);
  const bool sampling = opts.sampling != Sampling::none;
  const size_t budget = size_t(std::max(1, max_batch_tokens / (sampling ? 1 : std::max(1, opts.beam))));
  for_each_batch(
      model, source_lengths(sources), budget, opts.workers,
      [&](const std::vector<size_t>& idx, const at::Device& device) {
        const auto src = make_source_tensor(sources, idx).to(device);
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

int default_batch_tokens(const Transformer& model, const SearchOptions& search) {
  const bool beam_search = search.beam > 1 && search.sampling == Sampling::none;
  return beam_search && !model.parameters().front().is_cuda() ? kCpuBeamBatchTokens : default_batch_tokens(model);
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
