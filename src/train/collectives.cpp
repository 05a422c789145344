#include "train/collectives.h"

#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "train/flat_adam.h"
#include "train/train_state.h"

namespace yoke {

UpdateCounts share_update_counts(ProcessGroup* group, const UpdateCounts& mine) {
  if (!group) return mine;
  at::Tensor shared = at::zeros({4}, at::kDouble);
  shared[0] = double(mine.tgt_tokens);
  shared[1] = double(mine.tokens);
  shared[2] = mine.stop_asked ? 1.0 : 0.0;
  shared[3] = group->rank() == 0 ? mine.elapsed_s : 0.0;
  group->allreduce_sum(shared);
  UpdateCounts all;
  all.tgt_tokens = int64_t(shared[0].item<double>());
  all.tokens = int64_t(shared[1].item<double>());
  all.stop_asked = shared[2].item<double>() > 0;
  all.elapsed_s = shared[3].item<double>();
  return all;
}

void sum_over_ranks(ProcessGroup* group, at::Tensor& t) {
  if (group) group->allreduce_sum(t);
}

bool share_start(ProcessGroup* group, FlatAdam& opt, LoopState& st, bool resumed) {
  if (!group) return resumed;
  at::Tensor flag = at::full({1}, resumed ? 1 : 0, at::kLong);
  group->broadcast(flag, 0);
  resumed = flag.item<int64_t>() != 0;
  // Every rank initialised the same weights from the same seed; rank 0's are sent anyway, as
  // DDP does, so that no rank can start from anything else.
  at::Tensor params = opt.params().detach();
  group->broadcast(params, 0);
  if (!resumed) return false;
  group->broadcast(opt.exp_avg(), 0);
  group->broadcast(opt.exp_avg_sq(), 0);
  const std::string text = nlohmann::json{{"state", st.to_json()}, {"steps", opt.steps()}}.dump();
  at::Tensor length = at::full({1}, int64_t(text.size()), at::kLong);
  group->broadcast(length, 0);
  at::Tensor bytes = at::zeros({length.item<int64_t>()}, at::kByte);
  if (group->rank() == 0) std::memcpy(bytes.data_ptr(), text.data(), text.size());
  group->broadcast(bytes, 0);
  const auto j = nlohmann::json::parse(std::string(static_cast<const char*>(bytes.data_ptr()), size_t(bytes.numel())));
  st = LoopState::from_json(j.at("state"));
  opt.set_steps(j.at("steps"));
  return true;
}

}  // namespace yoke
