#include "lm/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "text/vocab.h"
#include "util/error.h"

namespace yoke {

int pick_token(const at::Tensor& logits, const SamplingOptions& o, std::mt19937_64& rng) {
  const auto l = logits.to(at::kCPU, at::kDouble).contiguous();
  const double* v = l.data_ptr<double>();
  const int n = int(l.numel());
  auto allowed = [](int id) { return id != Vocab::pad && id != Vocab::unk && id != Vocab::bos; };
  std::vector<int> ids;
  for (int i = 0; i < n; ++i)
    if (allowed(i) && std::isfinite(v[i])) ids.push_back(i);
  if (ids.empty()) throw InputError("generate: no token has a finite score");
  // Most likely first; equal scores by id, so that the choice never depends on the sort.
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return v[a] > v[b]; });
  if (o.temperature <= 0) return ids.front();
  if (o.top_k > 0 && int64_t(ids.size()) > o.top_k) ids.resize(size_t(o.top_k));
  std::vector<double> p(ids.size());
  const double top = v[ids.front()];
  for (size_t i = 0; i < ids.size(); ++i) p[i] = std::exp((v[ids[i]] - top) / o.temperature);
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  if (o.top_p < 1.0) {
    double mass = 0;
    size_t keep = 0;
    while (keep < p.size() && mass < o.top_p * total) mass += p[keep++];
    p.resize(std::max<size_t>(1, keep));
  }
  const double kept = std::accumulate(p.begin(), p.end(), 0.0);
  double u = std::uniform_real_distribution<double>(0.0, kept)(rng);
  for (size_t i = 0; i < p.size(); ++i) {
    if (u < p[i]) return ids[i];
    u -= p[i];
  }
  return ids[p.size() - 1];
}

std::vector<int> generate_tokens(Transformer& model, const std::vector<int>& context, const SamplingOptions& o,
                                 const std::function<void(int)>& on_token) {
  if (context.empty()) throw InputError("generate: the context needs at least the start token");
  // Written so that NaN fails each check (every comparison with NaN is false).
  if (!(o.top_p > 0 && o.top_p <= 1)) throw InputError("generate: top-p must be in (0, 1], got " + std::to_string(o.top_p));
  if (o.top_k < 0) throw InputError("generate: top-k must not be negative");
  if (!(o.temperature >= 0 && std::isfinite(o.temperature)))
    throw InputError("generate: temperature must be a number ≥ 0 (0: greedy), got " + std::to_string(o.temperature));
  if (o.max_tokens < 0) throw InputError("generate: max-tokens must not be negative");
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::mt19937_64 rng(o.seed);
  const auto ids = at::TensorOptions().dtype(at::kLong).device(model.parameters().front().device());
  auto state = model.start(nullptr);
  at::Tensor hidden;
  for (int id : context) hidden = model.step(at::full({1}, int64_t(id), ids), state);
  std::vector<int> out;
  const int64_t room = model.spec().max_positions - int64_t(context.size());
  for (int64_t t = 0; t < std::min(o.max_tokens, room); ++t) {
    const int next = pick_token(model.logits(hidden)[0].to(at::kCPU, at::kFloat), o, rng);
    if (next == Vocab::eos) break;
    out.push_back(next);
    if (on_token) on_token(next);
    hidden = model.step(at::full({1}, int64_t(next), ids), state);
  }
  model.train(was_training);
  return out;
}

}  // namespace yoke
