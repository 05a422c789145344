#include "eval/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "eval/bleu.h"
#include "eval/moments.h"

namespace yoke {

namespace {

std::vector<BleuStats> sentence_stats(const std::vector<std::string>& hyps,
                                      const std::vector<std::string>& refs, bool lowercase) {
  std::vector<BleuStats> stats;
  stats.reserve(hyps.size());
  for (size_t i = 0; i < hyps.size(); ++i)
    stats.push_back(bleu_sentence_stats(hyps[i], refs[i], lowercase));
  return stats;
}

// Sentence statistics of every seed's output of one system.
std::vector<std::vector<BleuStats>> system_stats(const std::vector<std::vector<std::string>>& outputs,
                                                 const std::vector<std::string>& refs, bool lowercase,
                                                 const char* name) {
  if (outputs.empty())
    throw std::invalid_argument(std::string("paired_bootstrap_bleu: system ") + name + " has no outputs");
  std::vector<std::vector<BleuStats>> stats;
  for (size_t s = 0; s < outputs.size(); ++s) {
    if (outputs[s].size() != refs.size())
      throw std::invalid_argument(std::string("paired_bootstrap_bleu: output ") + std::to_string(s + 1) +
                                  " of system " + name + " has " + std::to_string(outputs[s].size()) +
                                  " lines for " + std::to_string(refs.size()) + " references");
    stats.push_back(sentence_stats(outputs[s], refs, lowercase));
  }
  return stats;
}

// Corpus BLEU of each seed on the test set that holds sentence i counts[i] times.
std::vector<double> bleu_per_seed(const std::vector<std::vector<BleuStats>>& stats,
                                  const std::vector<uint32_t>& counts) {
  std::vector<double> out;
  for (const auto& seed_stats : stats) {
    BleuStats total;
    for (size_t i = 0; i < counts.size(); ++i)
      for (uint32_t c = 0; c < counts[i]; ++c) total += seed_stats[i];
    out.push_back(bleu_from_stats(total).score);
  }
  return out;
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * double(values.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - double(lo)) * (values[hi] - values[lo]);
}

BootstrapResult paired_bootstrap_bleu_seeds(const std::vector<std::vector<std::string>>& hyps_a,
                                            const std::vector<std::vector<std::string>>& hyps_b,
                                            const std::vector<std::string>& refs, int samples,
                                            uint64_t seed, bool lowercase) {
  return paired_bootstrap_bleu_seeds(system_stats(hyps_a, refs, lowercase, "A"),
                                     system_stats(hyps_b, refs, lowercase, "B"), samples, seed);
}

ResampledScores resample_sentences(const std::vector<std::vector<BleuStats>>& runs_a,
                                   const std::vector<std::vector<BleuStats>>& runs_b, int samples, uint64_t seed) {
  if (samples < 1)
    throw std::invalid_argument("bootstrap: samples must be positive, got " + std::to_string(samples));
  if (runs_a.empty() || runs_b.empty())
    throw std::invalid_argument(std::string("bootstrap: system ") + (runs_a.empty() ? "A" : "B") + " has no outputs");
  const size_t n = runs_a.front().size();
  for (const auto* side : {&runs_a, &runs_b})
    for (const auto& run : *side)
      if (run.size() != n)
        throw std::invalid_argument("bootstrap: outputs of " + std::to_string(run.size()) + " and " +
                                    std::to_string(n) + " sentences");
  ResampledScores r;
  const std::vector<uint32_t> whole(n, 1);
  r.observed_a = bleu_per_seed(runs_a, whole);
  r.observed_b = bleu_per_seed(runs_b, whole);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> counts(n);
  for (int s = 0; s < samples; ++s) {
    std::fill(counts.begin(), counts.end(), 0u);
    // Modulo rather than std::uniform_int_distribution, whose output differs between standard
    // libraries; the bias (n / 2^64) is negligible.
    for (size_t k = 0; k < n; ++k) ++counts[size_t(rng() % n)];
    r.a.push_back(bleu_per_seed(runs_a, counts));
    r.b.push_back(bleu_per_seed(runs_b, counts));
  }
  return r;
}

BootstrapResult paired_bootstrap_bleu_seeds(const std::vector<std::vector<BleuStats>>& stats_a,
                                            const std::vector<std::vector<BleuStats>>& stats_b, int samples,
                                            uint64_t seed) {
  return sentence_bootstrap(resample_sentences(stats_a, stats_b, samples, seed));
}

BootstrapResult sentence_bootstrap(const ResampledScores& scores) {
  const int samples = int(scores.a.size());
  BootstrapResult r;
  r.bleu_a = scores.observed_a;
  r.bleu_b = scores.observed_b;
  r.mean_a = mean(r.bleu_a);
  r.mean_b = mean(r.bleu_b);
  r.delta = r.mean_b - r.mean_a;
  r.samples = samples;
  std::vector<double> deltas;
  size_t at_most_0 = 0, at_least_0 = 0;
  for (size_t s = 0; s < scores.a.size(); ++s) {
    const double d = mean(scores.b[s]) - mean(scores.a[s]);
    deltas.push_back(d);
    at_most_0 += d <= 0;
    at_least_0 += d >= 0;
  }
  // Two-sided, as the interval: twice the smaller tail, counted as sacreBLEU counts, (c + 1) / (N + 1).
  r.p_value = std::min(1.0, 2.0 * double(std::min(at_most_0, at_least_0) + 1) / double(samples + 1));
  r.ci_low = quantile(deltas, 0.025);
  r.ci_high = quantile(deltas, 0.975);
  return r;
}

BootstrapResult paired_bootstrap_bleu(const std::vector<std::string>& hyps_a,
                                      const std::vector<std::string>& hyps_b,
                                      const std::vector<std::string>& refs, int samples,
                                      uint64_t seed, bool lowercase) {
  return paired_bootstrap_bleu_seeds({hyps_a}, {hyps_b}, refs, samples, seed, lowercase);
}

}  // namespace yoke
