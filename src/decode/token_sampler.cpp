#include "decode/token_sampler.h"

#include <algorithm>
#include <tuple>

namespace yoke {
namespace {

double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * (1.0 / 9007199254740992.0); }

// Draws from probabilities p[0..n) (best first), keeping the first `keep` of them.
int64_t draw_from(const float* p, int64_t keep, std::mt19937_64& rng) {
  double mass = 0;
  for (int64_t j = 0; j < keep; ++j) mass += double(p[j]);
  double u = uniform01(rng) * mass;
  for (int64_t j = 0; j < keep; ++j) {
    u -= double(p[j]);
    if (u < 0) return j;
  }
  return keep - 1;
}

}  // namespace

std::mt19937_64 TokenSampler::rng_for(uint64_t seed, size_t index) {
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(index), uint32_t(uint64_t(index) >> 32)};
  return std::mt19937_64(seq);
}

void TokenSampler::rank(const at::Tensor& lp) {
  auto scaled = o_.temperature == 1.0 ? lp : lp / o_.temperature;
  at::Tensor vals, ids;
  if (o_.sampling == Sampling::topk) {
    std::tie(vals, ids) = scaled.topk(std::min<int64_t>(std::max(1, o_.topk), scaled.size(1)), 1);
  } else {
    std::tie(vals, ids) = scaled.sort(1, /*descending=*/true);
  }
  probs_ = at::softmax(vals, 1).contiguous();
  ids_ = ids.contiguous();
  width_ = probs_.size(1);
}

int64_t TokenSampler::draw(int64_t r, std::mt19937_64& rng) const {
  const float* p = probs_.data_ptr<float>() + r * width_;
  int64_t cut = width_;
  if (o_.sampling == Sampling::topp) {  // the smallest set holding topp of the probability
    double mass = 0;
    for (cut = 0; cut < width_ && mass < o_.topp; ++cut) mass += double(p[cut]);
    cut = std::max<int64_t>(cut, 1);
  }
  return ids_.data_ptr<int64_t>()[r * width_ + draw_from(p, cut, rng)];
}

}  // namespace yoke
