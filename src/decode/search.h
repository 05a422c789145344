// Greedy and beam search over a trained Transformer (or an ensemble of them), batched, with
// cached keys/values. Sentences that finish leave the batch, so the work shrinks as decoding goes on.
// Beam search is a loop (search.cpp) that calls small components at fixed points of each step:
// the shortlist before scoring (ensemble_scorer.h); the length limit and prefixes before selection,
// constraints at selection, alignments after it (search_steps.h); sampling draws instead of
// selecting (token_sampler.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/transformer.h"

namespace yoke {

class Shortlist;

// Models decoded together: at each step their log-probabilities are averaged with `weights`
// (Marian's --weights; they sum to 1). The models share the target vocabulary; architecture and
// estimator may differ. One model converts implicitly, so every search takes a model or an ensemble.
struct Ensemble {
  Ensemble(Transformer& model) : models{&model}, weights{1.0} {}  // NOLINT: implicit by design
  // Throws InputError when the counts differ or the weights are not positive.
  Ensemble(std::vector<Transformer*> models, std::vector<double> weights);
  Transformer& first() const { return *models.front(); }
  size_t size() const { return models.size(); }
  std::vector<Transformer*> models;
  std::vector<double> weights;
};

enum class Sampling { none, topk, topp };

struct SearchOptions {
  int beam = 5;            // 1 = greedy
  double lenpen = 1.0;     // hypothesis score = log p / length^lenpen (length counts eos)
  double max_len_a = 1.2;  // at most a·source_length + b target tokens
  int max_len_b = 10;
  // Batches decoded at once, each on its own thread, by translate_ids and its kin (CPU only; a
  // search itself ignores it): decode/parallel_batches.h.
  int workers = 1;
  // Sampling instead of search (fairseq's --sampling, for back-translation): each token is drawn
  // from the `topk` most likely or from the smallest set holding `topp` of the probability, after
  // dividing the log-probabilities by `temperature`. A sentence's draws depend only on `seed` and
  // its index in the input (Row::index), so they repeat whatever the batching.
  Sampling sampling = Sampling::none;
  int topk = 10;
  double topp = 0.9;
  double temperature = 1.0;
  uint64_t seed = 1;
  // Keep each hypothesis's cross-attention (Hypothesis::attention) for word alignments.
  bool alignment = false;
  // Output layer over a per-batch subset of the target vocabulary (decode/shortlist.h); null: all.
  const Shortlist* shortlist = nullptr;
};

// What a sentence's translation must hold: it continues `prefix` (fairseq's --prefix-size,
// CTranslate2's target_prefix) and contains every phrase of `constraints` (lexically constrained
// decoding, Post & Vilar 2018). Ids without eos.
struct TargetGuide {
  std::vector<int> prefix;
  std::vector<std::vector<int>> constraints;
  bool empty() const { return prefix.empty() && constraints.empty(); }
};

// Per row of a batch: the sentence's index in the input (sampling seeds) and its guide (or null).
struct Row {
  size_t index = 0;
  const TargetGuide* guide = nullptr;
};

// One finished hypothesis of beam search with the model's scores for it.
struct Hypothesis {
  std::vector<int> tokens;  // without eos
  double log_prob = 0;      // log p(tokens, eos | source): the sum over its tokens and eos
  double score = 0;         // what the search ranks by: log_prob / (tokens + 1)^lenpen
  // With SearchOptions::alignment: per target token and eos, the cross-attention over the source
  // subwords and eos (averaged over the first model's layers and heads); rows sum to 1.
  std::vector<std::vector<float>> attention;
};

// src [B, S] (ids + eos, right-padded). Returns the best target ids per row, without eos.
std::vector<std::vector<int>> greedy_search(const Ensemble& model, const at::Tensor& src, const SearchOptions& opts);
std::vector<std::vector<int>> beam_search(const Ensemble& model, const at::Tensor& src, const SearchOptions& opts);
inline std::vector<std::vector<int>> search(const Ensemble& model, const at::Tensor& src, const SearchOptions& opts) {
  return opts.beam <= 1 ? greedy_search(model, src, opts) : beam_search(model, src, opts);
}

// Beam search of width opts.beam (1 runs the same search with one hypothesis, which finds what
// greedy search finds) keeping up to `nbest` (at most the beam) finished hypotheses per row,
// best score first. beam_search returns the first of each list. `rows` (empty, or one per row of
// src) carries prefixes and constraints; a hypothesis ends only once it holds every constraint.
std::vector<std::vector<Hypothesis>> beam_search_nbest(const Ensemble& model, const at::Tensor& src,
                                                       const SearchOptions& opts, int nbest,
                                                       const std::vector<Row>& rows = {});

// One sample per row (opts.sampling must not be none), continuing the row's prefix if any; its
// log_prob and score are the model's (without the temperature).
std::vector<std::vector<Hypothesis>> sample_search(const Ensemble& model, const at::Tensor& src,
                                                   const SearchOptions& opts, const std::vector<Row>& rows);

}  // namespace yoke
