#include "eval/bootstrap.h"

#include <random>
#include <stdexcept>

#include "eval/bleu.h"

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

BleuStats sum(const std::vector<BleuStats>& stats) {
  BleuStats total;
  for (const BleuStats& s : stats) total += s;
  return total;
}

void check_inputs(size_t a, size_t b, size_t refs, int samples) {
  if (a != refs || b != refs)
    throw std::invalid_argument("paired_bootstrap_bleu: " + std::to_string(a) + " and " +
                                std::to_string(b) + " hypotheses for " + std::to_string(refs) +
                                " references");
  if (samples < 1)
    throw std::invalid_argument("paired_bootstrap_bleu: samples must be positive, got " +
                                std::to_string(samples));
}

}  // namespace

BootstrapResult paired_bootstrap_bleu(const std::vector<std::string>& hyps_a,
                                      const std::vector<std::string>& hyps_b,
                                      const std::vector<std::string>& refs, int samples,
                                      uint64_t seed, bool lowercase) {
  check_inputs(hyps_a.size(), hyps_b.size(), refs.size(), samples);
  const std::vector<BleuStats> stats_a = sentence_stats(hyps_a, refs, lowercase);
  const std::vector<BleuStats> stats_b = sentence_stats(hyps_b, refs, lowercase);

  BootstrapResult r;
  r.bleu_a = bleu_from_stats(sum(stats_a)).score;
  r.bleu_b = bleu_from_stats(sum(stats_b)).score;
  r.delta = r.bleu_b - r.bleu_a;
  r.samples = samples;

  const size_t n = refs.size();
  std::mt19937_64 rng(seed);
  double failures = 0.0;  // resamples where B is not better; a tie counts half
  for (int s = 0; s < samples; ++s) {
    BleuStats a, b;
    for (size_t k = 0; k < n; ++k) {
      // Modulo rather than std::uniform_int_distribution, whose output differs between standard
      // libraries; the bias (n / 2^64) is negligible.
      const size_t i = static_cast<size_t>(rng() % n);
      a += stats_a[i];
      b += stats_b[i];
    }
    const double score_a = bleu_from_stats(a).score, score_b = bleu_from_stats(b).score;
    if (score_b < score_a)
      failures += 1.0;
    else if (score_b == score_a)
      failures += 0.5;
  }
  r.p_value = failures / samples;
  return r;
}

}  // namespace yoke
