#include "decode/batch_loop.h"

#include <algorithm>
#include <numeric>

#include "decode/parallel_batches.h"

namespace yoke {

void for_each_batch(const Ensemble& model, const std::vector<size_t>& lengths, size_t budget, int workers,
                    const std::function<void(const std::vector<size_t>&, const at::Device&)>& decode,
                    const std::function<void(size_t, const std::vector<size_t>&)>& on_batch) {
  std::vector<bool> was_training;
  for (auto* m : model.models) {
    was_training.push_back(m->is_training());
    m->eval();
  }
  const auto device = model.first().parameters().front().device();
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  // Threads beyond one a worker decode a batch's sentences side by side, one piece a thread: a
  // search's small products and the work between them use a second thread on the same product
  // poorly (fp32 beam 4, one worker on 2 threads: 1.23× as pieces; docs/performance.md,
  // "Decoding workers"). `budget` is each piece's: a search holds as many sentences as with one thread.
  workers = device.is_cpu() ? std::max(1, workers) : 1;
  const int intra = device.is_cpu() ? threads_per_worker(workers) : 1;
  budget *= size_t(intra);
  std::vector<std::vector<size_t>> batches;
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    const size_t longest = lengths[order[start]];
    while (end < order.size() && (end - start + 1) * longest <= budget) ++end;
    batches.emplace_back(order.begin() + long(start), order.begin() + long(end));
    start = end;
  }
  size_t done = 0;
  run_batches(
      batches.size(), workers,
      [&](size_t b) {
        const auto pieces = deal_batch(batches[b], intra);
        if (pieces.size() <= 1) return decode(batches[b], device);
        run_batches(pieces.size(), int(pieces.size()), [&](size_t p) { decode(pieces[p], device); });
      },
      [&](size_t b) {
        done += batches[b].size();
        if (on_batch) on_batch(done, batches[b]);
      });
  for (size_t m = 0; m < model.size(); ++m)
    if (was_training[m]) model.models[m]->train();
}

std::vector<size_t> source_lengths(const std::vector<std::vector<int>>& sources) {
  std::vector<size_t> lengths;
  lengths.reserve(sources.size());
  for (const auto& s : sources) lengths.push_back(s.size() + 1);
  return lengths;
}

}  // namespace yoke
