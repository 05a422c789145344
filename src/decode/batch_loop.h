// The one batching loop of decoding: translation (batched_decoding.h), forced decoding
// (force_decode.h) and the serving queue's batches all go through it. Sentences are sorted
// longest first (the slowest batches come early, so an ETA is honest; stable for ties) and cut
// into batches of at most `budget` padded tokens, so that little of a batch is padding. On the
// CPU a worker with more than one thread deals its batch's sentences to its threads
// (parallel_batches.h's deal_batch), each piece decoded on one thread at once with the others;
// there `budget` holds for each piece, so a batch has budget × the worker's threads.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

#include "decode/search.h"

namespace yoke {

// `lengths[i]`: sentence i's padded length in tokens (with its eos). Calls decode(indices, device)
// on each batch (or on each piece of it, above), on `workers` threads on the CPU (run_batches; one
// on a GPU), with every model in eval mode (restored after); `on_batch(done, indices)` follows
// each whole batch, one call at a time (done: sentences so far).
void for_each_batch(const Ensemble& model, const std::vector<size_t>& lengths, size_t budget, int workers,
                    const std::function<void(const std::vector<size_t>& indices, const at::Device& device)>& decode,
                    const std::function<void(size_t done, const std::vector<size_t>& indices)>& on_batch);

// The padded length of each source (its ids and eos): what translation batches by.
std::vector<size_t> source_lengths(const std::vector<std::vector<int>>& sources);

}  // namespace yoke
