// Simulated experiments for the calibration tests: BLEU sufficient statistics of test-set
// outputs from "trained models" whose quality moves with the seed, no training involved.
//
// A test set is n sentences, each with a reference length and a difficulty shared by every
// system (some sentences are hard for all). One output of one seed of one variant gets, per
// sentence and n-gram order, matches ~ Binomial(hypothesis n-grams, p) with
//   p = sigmoid(skill − difficulty + ε − 0.7 (order − 1)),
//   skill = base + effect of the variant + seed_sd · z_seed   (z ~ N(0, 1), one per run),
//   ε ~ N(0, output_sd) per sentence and run               (which sentences a run gets right),
// plus, per sentence, a shift of the variant's own, sentence_effect_sd · N(0, 1), drawn once per
// variant and shared by its seeds: a variant helps on some sentences and hurts on others even when
// it is no better on average, so that one test set can favour it by chance.
// So a variant's BLEU moves from seed to seed through z (the whole output better or worse) and
// through ε (different sentences right), as real seeds do; a comparison of two variants also sees
// the test set's own noise.
//
// Every draw comes from std::mt19937_64 (whose sequence the standard fixes) through this file's
// own transforms, not std::normal/binomial_distribution, whose outputs differ between standard
// libraries: the same seed gives the same experiments on every machine.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "eval/bleu.h"

namespace yoke::sim {

class Draws {
 public:
  explicit Draws(uint64_t seed) : rng_(seed) {}
  double uniform() { return double(rng_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                               // Box–Muller
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  int64_t binomial(int64_t n, double p) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; ++i) k += uniform() < p;
    return k;
  }

 private:
  std::mt19937_64 rng_;
};

struct TestSet {
  std::vector<int64_t> ref_len;
  std::vector<double> difficulty;
};

inline TestSet make_test_set(int sentences, Draws& d) {
  TestSet t;
  for (int i = 0; i < sentences; ++i) {
    t.ref_len.push_back(8 + int64_t(d.uniform() * 16));  // 8..23 tokens, like Multi30k captions
    t.difficulty.push_back(d.normal());
  }
  return t;
}

struct Noise {
  double seed_sd = 0.12;   // of the skill, one draw per run
  double output_sd = 0.8;  // of ε, one draw per sentence and run
  double sentence_effect_sd = 0.25;  // of a variant's own per-sentence shift
};

// The per-sentence statistics of one run (one seed of one variant) of the given mean skill, with the
// variant's per-sentence shifts.
inline std::vector<BleuStats> simulate_run(const TestSet& t, double skill, const std::vector<double>& shift,
                                           const Noise& noise, Draws& d) {
  const double run_skill = skill + noise.seed_sd * d.normal();
  std::vector<BleuStats> out(t.ref_len.size());
  for (size_t i = 0; i < t.ref_len.size(); ++i) {
    BleuStats& s = out[i];
    s.sys_len = s.ref_len = t.ref_len[i];
    const double logit = run_skill + shift[i] - t.difficulty[i] + noise.output_sd * d.normal();
    for (int n = 0; n < 4; ++n) {
      s.totals[size_t(n)] = std::max<int64_t>(0, s.sys_len - n);
      const double p = 1.0 / (1.0 + std::exp(-(logit - 0.7 * n)));
      s.matches[size_t(n)] = d.binomial(s.totals[size_t(n)], p);
    }
  }
  return out;
}

// `seeds` runs of one variant.
inline std::vector<std::vector<BleuStats>> simulate_variant(const TestSet& t, double skill, int seeds,
                                                            const Noise& noise, Draws& d) {
  std::vector<double> shift;
  for (size_t i = 0; i < t.difficulty.size(); ++i) shift.push_back(noise.sentence_effect_sd * d.normal());
  std::vector<std::vector<BleuStats>> runs;
  for (int s = 0; s < seeds; ++s) runs.push_back(simulate_run(t, skill, shift, noise, d));
  return runs;
}

inline double corpus_score(const std::vector<BleuStats>& run) {
  BleuStats total;
  for (const auto& s : run) total += s;
  return bleu_from_stats(total).score;
}

}  // namespace yoke::sim
