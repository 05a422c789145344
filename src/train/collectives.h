// What the ranks of a data-parallel run share besides gradients (those: train/gradient_sync.h),
// so that every rank takes the same decisions. Without a group (one process) each is the
// identity.
#pragma once
#include <cstdint>

#include "compat/torch.h"
#include "train/process_group.h"

namespace yoke {

class FlatAdam;
struct LoopState;

// After an update's backward: what the loop needs to agree on.
struct UpdateCounts {
  int64_t tgt_tokens = 0;  // target tokens: the divisor of the summed gradient
  int64_t tokens = 0;      // source + target tokens: the rate
  bool stop_asked = false;
  double elapsed_s = 0;  // rank 0's clock (every rank stops at the same max_minutes update)
};
// Sums the token counts and ORs the stop flags over the ranks, and hands out rank 0's clock.
UpdateCounts share_update_counts(ProcessGroup* group, const UpdateCounts& mine);

// Sums a small tensor of counts over the ranks, in place.
void sum_over_ranks(ProcessGroup* group, at::Tensor& t);

// Rank 0's weights, optimizer state and loop state reach every rank (another machine need not
// see rank 0's files). Returns whether rank 0 resumed.
bool share_start(ProcessGroup* group, FlatAdam& opt, LoopState& st, bool resumed);

}  // namespace yoke
