#include "decode/force_decode.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "batch/batch.h"
#include "decode/batch_loop.h"
#include "decode/row_log_softmax.h"
#include "text/vocab.h"
#include "util/error.h"

namespace yoke {
namespace {

// tgt_in = bos y (padded), tgt_out = y eos (padded), for the rows `idx`.
std::pair<at::Tensor, at::Tensor> target_tensors(const std::vector<std::vector<int>>& targets,
                                                 const std::vector<size_t>& idx) {
  size_t longest = 0;
  for (size_t i : idx) longest = std::max(longest, targets[i].size() + 1);
  auto in = at::full({int64_t(idx.size()), int64_t(longest)}, int64_t(Vocab::pad), at::kLong);
  auto out = at::full({int64_t(idx.size()), int64_t(longest)}, int64_t(Vocab::pad), at::kLong);
  auto a = in.accessor<int64_t, 2>();
  auto b = out.accessor<int64_t, 2>();
  for (size_t r = 0; r < idx.size(); ++r) {
    const auto& t = targets[idx[r]];
    a[r][0] = Vocab::bos;
    for (size_t j = 0; j < t.size(); ++j) {
      a[r][j + 1] = t[j];
      b[r][j] = t[j];
    }
    b[r][t.size()] = Vocab::eos;
  }
  return {in, out};
}

}  // namespace

std::vector<ForcedScore> force_decode(const Ensemble& model, const std::vector<std::vector<int>>& sources,
                                      const std::vector<std::vector<int>>& targets, double lenpen,
                                      int max_batch_tokens, const std::function<void(size_t)>& on_batch, int workers) {
  if (sources.size() != targets.size())
    throw InputError("force_decode: " + std::to_string(sources.size()) + " sources but " +
                     std::to_string(targets.size()) + " targets");
  size_t positions = size_t(model.first().spec().max_positions);
  for (auto* m : model.models) positions = std::min(positions, size_t(m->spec().max_positions));
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].size() + 1 > positions)
      throw InputError("target " + std::to_string(i + 1) + " has " + std::to_string(targets[i].size()) +
                       " subwords; the model has " + std::to_string(positions - 1) + " target positions");
    if (sources[i].size() + 1 > positions)
      throw InputError("source " + std::to_string(i + 1) + " has " + std::to_string(sources[i].size()) +
                       " subwords; the model has " + std::to_string(positions - 1) + " source positions");
  }
  std::vector<size_t> lengths(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) lengths[i] = std::max(sources[i].size(), targets[i].size()) + 1;
  std::vector<ForcedScore> out(targets.size());
  for_each_batch(
      model, lengths, size_t(std::max(1, max_batch_tokens)), workers,
      [&](const std::vector<size_t>& idx, const at::Device& device) {
        at::NoGradGuard no_grad;  // per worker thread: the guard is thread-local
        auto src = make_source_tensor(sources, idx).to(device);
        auto [tgt_in, tgt_out] = target_tensors(targets, idx);
        at::Tensor lp;
        for (size_t m = 0; m < model.size(); ++m) {
          auto enc = model.models[m]->encode(src);
          auto hidden = model.models[m]->decode(tgt_in.to(device), &enc);
          auto one = log_softmax_in_place(model.models[m]->logits(hidden).to(at::kFloat));  // as the search does
          if (model.size() > 1) one.mul_(model.weights[m]);  // as the search weighs them
          lp = lp.defined() ? lp.add_(one) : one;
        }
        auto picked = lp.gather(2, tgt_out.to(device).unsqueeze(2)).squeeze(2).to(at::kCPU).contiguous();
        auto p = picked.accessor<float, 2>();
        for (size_t r = 0; r < idx.size(); ++r) {
          ForcedScore& f = out[idx[r]];
          const size_t n = targets[idx[r]].size() + 1;
          f.token_log_probs.resize(n);
          for (size_t j = 0; j < n; ++j) {
            f.token_log_probs[j] = p[int64_t(r)][int64_t(j)];
            f.log_prob += double(f.token_log_probs[j]);
          }
          f.score = f.log_prob / std::pow(double(n), lenpen);
        }
      },
      [&](size_t done, const std::vector<size_t>&) {
        if (on_batch) on_batch(done);
      });
  return out;
}

}  // namespace yoke
