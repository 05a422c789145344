#include "align/ibm2.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

namespace yoke {

namespace {

constexpr uint32_t kNull = 0;                                   // given-side id of the null word
constexpr uint32_t kUnknown = std::numeric_limits<uint32_t>::max();  // word not seen in training
constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();  // pair not in the table
constexpr size_t kMaxCachedLinks = size_t(1) << 27;  // 512 MB of cached slots at most
constexpr double kUnseenProb = 1e-9;  // t for pairs never seen together: lets the prior decide
constexpr double kMinTension = 0.1, kMaxTension = 14.0;  // fast_align's clamp
constexpr int kTensionSteps = 8;
constexpr double kTensionRate = 20.0;

// sum_{k=0}^{K-1} r^k with r = exp(-step), step > 0; expm1 keeps it exact for r near 1.
double geometric_sum(int count, double step) {
  if (step < 1e-12) return count;
  return std::expm1(-step * count) / std::expm1(-step);
}

// sum_{k=0}^{K-1} k r^k with r = exp(-step): the closed form cancels badly for r near 1, so
// small steps sum directly (K is a sentence length there, so this stays cheap).
double weighted_geometric_sum(int count, double step) {
  if (step < 1e-3) {
    double total = 0, rk = 1, r = std::exp(-step);
    for (int k = 0; k < count; ++k, rk *= r) total += k * rk;
    return total;
  }
  const double r = std::exp(-step), one_minus_r = -std::expm1(-step);
  const double r_k = std::exp(-step * count), r_km1 = std::exp(-step * (count - 1));
  return r * (1.0 - count * r_km1 + (count - 1) * r_k) / (one_minus_r * one_minus_r);
}

// Splits [0, costs.size()) into `parts` contiguous ranges of about equal total cost.
std::vector<size_t> balanced_bounds(const std::vector<double>& costs, int parts) {
  double total = 0;
  for (double c : costs) total += c;
  std::vector<size_t> bounds{0};
  double acc = 0;
  for (size_t k = 0; k < costs.size() && (int)bounds.size() < parts; ++k) {
    acc += costs[k];
    if (acc >= total * bounds.size() / parts) bounds.push_back(k + 1);
  }
  while ((int)bounds.size() <= parts) bounds.push_back(costs.size());
  bounds.back() = costs.size();
  return bounds;
}

// Runs fn(part, begin, end) over the ranges, one thread per range (inline when there is one).
template <class Fn>
void run_parts(const std::vector<size_t>& bounds, Fn fn) {
  const int parts = (int)bounds.size() - 1;
  if (parts == 1) return fn(0, bounds[0], bounds[1]);
  std::vector<std::thread> pool;
  for (int p = 0; p < parts; ++p) pool.emplace_back(fn, p, bounds[p], bounds[p + 1]);
  for (auto& t : pool) t.join();
}

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Keeps a row of co-occurring ids short while it is filled: duplicates are dropped whenever the
// row doubles, so memory stays near the number of distinct pairs, not of token pairs.
void append_dedup(std::vector<uint32_t>& row, size_t& unique_size, uint32_t id) {
  row.push_back(id);
  if (row.size() < 2 * std::max<size_t>(unique_size, 64)) return;
  std::sort(row.begin(), row.end());
  row.erase(std::unique(row.begin(), row.end()), row.end());
  unique_size = row.size();
}

}  // namespace

// ---------------------------------------------------------------- diagonal prior

double DiagonalPrior::feature(int i, int j, int m, int n) {
  return -std::fabs(double(i) / m - double(j) / n);
}

double DiagonalPrior::unnormalized(int i, int j, int m, int n, double lambda) {
  return std::exp(lambda * feature(i, j, m, n));
}

// Positions j <= floor(i*n/m) lie below the diagonal point and j > floor above it; on each side
// the value shrinks by r = exp(-lambda/n) per step away from the point: two geometric series.
double DiagonalPrior::z(int i, int m, int n, double lambda) {
  const int below = int((long long)i * n / m);  // integer floor: no rounding at exact points
  const double step = lambda / n;
  double total = 0;
  if (below > 0) total += unnormalized(i, below, m, n, lambda) * geometric_sum(below, step);
  if (below < n) total += unnormalized(i, below + 1, m, n, lambda) * geometric_sum(n - below, step);
  return total;
}

// Same split; within a side the feature falls by 1/n per step, so sum(feature * value) is an
// arithmetico-geometric series: g * (a * sum r^k - (1/n) * sum k r^k).
double DiagonalPrior::dlogz(int i, int m, int n, double lambda) {
  const int below = int((long long)i * n / m);
  const double step = lambda / n;
  double total = 0;
  auto side = [&](int start, int count) {
    const double a = feature(i, start, m, n), g = unnormalized(i, start, m, n, lambda);
    return g * (a * geometric_sum(count, step) - weighted_geometric_sum(count, step) / n);
  };
  if (below > 0) total += side(below, below);
  if (below < n) total += side(below + 1, n - below);
  return total / z(i, m, n, lambda);
}

namespace {

// prior[0] = p0 (null), prior[j] = p(a_i = j) for j = 1..n, by walking out from the diagonal
// point with the ratio r instead of one exp per position.
void fill_prior(int i, int m, int n, double lambda, double p0, double* prior) {
  prior[0] = p0;
  const int below = int((long long)i * n / m);
  const double r = std::exp(-lambda / n);
  const double scale = (1.0 - p0) / DiagonalPrior::z(i, m, n, lambda);
  double v = below > 0 ? DiagonalPrior::unnormalized(i, below, m, n, lambda) * scale : 0;
  for (int j = below; j >= 1; --j, v *= r) prior[j] = v;
  v = below < n ? DiagonalPrior::unnormalized(i, below + 1, m, n, lambda) * scale : 0;
  for (int j = below + 1; j <= n; ++j, v *= r) prior[j] = v;
}

// Slot of (e, f) in the CSR table, or kNoSlot.
uint32_t find_slot(const std::vector<size_t>& row_start, const std::vector<uint32_t>& cols,
                   uint32_t e, uint32_t f) {
  if (e == kUnknown || f == kUnknown || e + 1 >= row_start.size()) return kNoSlot;
  auto begin = cols.begin() + row_start[e], end = cols.begin() + row_start[e + 1];
  auto it = std::lower_bound(begin, end, f);
  return (it != end && *it == f) ? uint32_t(it - cols.begin()) : kNoSlot;
}

// Slots of the links of generated word f to null (j = 0) and to e[0..n-1] (j = 1..n).
void resolve_slots(const std::vector<size_t>& row_start, const std::vector<uint32_t>& cols,
                   const uint32_t* e, int n, uint32_t f, uint32_t* slot) {
  slot[0] = find_slot(row_start, cols, kNull, f);
  for (int j = 1; j <= n; ++j) slot[j] = find_slot(row_start, cols, e[j - 1], f);
}

}  // namespace

// ---------------------------------------------------------------- corpus and workspaces

// Sentence pairs as ids, flat: pair k has given ids given[given_off[k] .. given_off[k+1]) etc.
// Length classes (m, n) group the pairs for the tension update.
struct Ibm2Aligner::Sentences {
  std::vector<uint32_t> given, generated;
  std::vector<size_t> given_off{0}, generated_off{0};
  std::vector<uint32_t> length_class;       // per pair
  std::vector<int> class_m, class_n;        // per class
  std::vector<size_t> class_off;            // per class: first slot in position arrays
  size_t class_positions = 0;
  // Training only: the table slot of every link, pair k's block at link_off[k], one row of n+1
  // per generated position. Binary searches once instead of once per EM iteration.
  std::vector<uint32_t> link_slots;
  std::vector<size_t> link_off;

  size_t size() const { return given_off.size() - 1; }
  int n(size_t k) const { return int(given_off[k + 1] - given_off[k]); }
  int m(size_t k) const { return int(generated_off[k + 1] - generated_off[k]); }
  const uint32_t* given_at(size_t k) const { return given.data() + given_off[k]; }
  const uint32_t* generated_at(size_t k) const { return generated.data() + generated_off[k]; }
  double links(size_t k) const { return double(n(k) + 1) * m(k); }

  std::vector<double> link_costs() const {
    std::vector<double> costs(size());
    for (size_t k = 0; k < size(); ++k) costs[k] = links(k);
    return costs;
  }

  // Fills link_slots unless the corpus is too large to cache (then E-steps search each time).
  void cache_slots(const std::vector<size_t>& row_start, const std::vector<uint32_t>& cols,
                   int threads) {
    link_off.assign(1, 0);
    for (size_t k = 0; k < size(); ++k) link_off.push_back(link_off.back() + size_t(links(k)));
    if (link_off.back() > kMaxCachedLinks) {
      link_off.clear();
      return;
    }
    link_slots.resize(link_off.back());
    const auto bounds = balanced_bounds(link_costs(), threads);
    run_parts(bounds, [&](int, size_t begin, size_t end) {
      for (size_t k = begin; k < end; ++k)
        for (int i = 0; i < m(k); ++i)
          resolve_slots(row_start, cols, given_at(k), n(k), generated_at(k)[i],
                        link_slots.data() + link_off[k] + size_t(i) * (n(k) + 1));
    });
  }

  void add_classes() {
    std::unordered_map<uint64_t, uint32_t> ids;
    for (size_t k = 0; k < size(); ++k) {
      const uint64_t key = (uint64_t(m(k)) << 32) | uint32_t(n(k));
      auto [it, fresh] = ids.emplace(key, uint32_t(class_m.size()));
      if (fresh) {
        class_m.push_back(m(k));
        class_n.push_back(n(k));
        class_off.push_back(class_positions);
        class_positions += m(k);
      }
      length_class.push_back(it->second);
    }
  }
};

// One thread's E-step accumulators plus scratch, reused across iterations. Aligned to a cache
// line so that threads updating their per-token sums do not share lines.
struct alignas(64) Ibm2Aligner::Workspace {
  std::vector<double> counts;          // expected counts, parallel to probs_
  std::vector<double> position_mass;   // non-null posterior mass per (class, i)
  double log_likelihood = 0, null_mass = 0, expected_feature = 0, tokens = 0;
  std::vector<double> post;            // scratch: posterior over 0..n
  std::vector<uint32_t> slot;          // scratch: table slots when not cached

  void reset(size_t table_size, size_t positions) {
    counts.assign(table_size, 0.0);
    position_mass.assign(positions, 0.0);
    log_likelihood = null_mass = expected_feature = tokens = 0;
  }
};

namespace {

uint32_t intern(std::unordered_map<std::string, uint32_t>& ids, std::vector<std::string>& words,
                const std::string& w) {
  auto [it, fresh] = ids.emplace(w, uint32_t(words.size()));
  if (fresh) words.push_back(w);
  return it->second;
}

uint32_t find_id(const std::unordered_map<std::string, uint32_t>& ids, const std::string& w) {
  auto it = ids.find(w);
  return it == ids.end() ? kUnknown : it->second;
}

}  // namespace

// Drops pairs with an empty side: there is nothing to learn from them.
Ibm2Aligner::Sentences Ibm2Aligner::intern_corpus(const Corpus& given, const Corpus& generated) {
  Sentences s;
  for (size_t k = 0; k < given.size(); ++k) {
    if (given[k].empty() || generated[k].empty()) continue;
    for (const auto& w : given[k]) s.given.push_back(intern(given_ids_, given_words_, w));
    for (const auto& w : generated[k])
      s.generated.push_back(intern(generated_ids_, generated_words_, w));
    s.given_off.push_back(s.given.size());
    s.generated_off.push_back(s.generated.size());
  }
  return s;
}

// Keeps every pair (empty ones stay empty) so that output lines match input lines.
Ibm2Aligner::Sentences Ibm2Aligner::lookup_corpus(const Corpus& given,
                                                     const Corpus& generated) const {
  Sentences s;
  for (size_t k = 0; k < given.size(); ++k) {
    for (const auto& w : given[k]) s.given.push_back(find_id(given_ids_, w));
    for (const auto& w : generated[k]) s.generated.push_back(find_id(generated_ids_, w));
    s.given_off.push_back(s.given.size());
    s.generated_off.push_back(s.generated.size());
  }
  return s;
}

// The table holds exactly the pairs (e, f) that co-occur in some sentence pair, plus (null, f).
void Ibm2Aligner::build_table(const Sentences& corpus) {
  std::vector<std::vector<uint32_t>> rows(given_words_.size());
  std::vector<size_t> unique_sizes(rows.size(), 0);
  for (size_t k = 0; k < corpus.size(); ++k) {
    const uint32_t* e = corpus.given_at(k);
    const uint32_t* f = corpus.generated_at(k);
    for (int j = 0; j < corpus.n(k); ++j)
      for (int i = 0; i < corpus.m(k); ++i) append_dedup(rows[e[j]], unique_sizes[e[j]], f[i]);
  }
  rows[kNull].resize(generated_words_.size());  // every generated word co-occurs with null
  for (uint32_t f = 0; f < rows[kNull].size(); ++f) rows[kNull][f] = f;
  row_start_.assign(1, 0);
  cols_.clear();
  for (auto& row : rows) {
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    cols_.insert(cols_.end(), row.begin(), row.end());
    row_start_.push_back(cols_.size());
    std::vector<uint32_t>().swap(row);
  }
  if (cols_.size() >= kNoSlot) throw std::length_error("Ibm2Aligner: table over 2^32 pairs");
  // Uniform over the generated vocabulary: the same for every e, so the first E-step follows the
  // prior alone, and its likelihood is that of a uniform model.
  probs_.assign(cols_.size(), 1.0 / std::max<size_t>(1, generated_words_.size()));
}

double Ibm2Aligner::lookup(uint32_t given, uint32_t generated) const {
  const uint32_t slot = find_slot(row_start_, cols_, given, generated);
  return slot == kNoSlot ? 0.0 : probs_[slot];
}

double Ibm2Aligner::prob(const std::string& given, const std::string& generated) const {
  const uint32_t e = given.empty() ? kNull : find_id(given_ids_, given);
  return lookup(e, find_id(generated_ids_, generated));
}

namespace {

// post[j] = prior[j] * t(f | e_j) for the generated word at position i, e_0 = null, given the
// table slots of its links. Returns the sum over j (the likelihood of the word).
double score_position(const std::vector<double>& probs, const uint32_t* slot, int n, int i, int m,
                      double lambda, double p0, double* post) {
  fill_prior(i, m, n, lambda, p0, post);
  double sum = 0;
  for (int j = 0; j <= n; ++j) {
    post[j] *= slot[j] == kNoSlot ? kUnseenProb : probs[slot[j]];
    sum += post[j];
  }
  return sum;
}

}  // namespace

// E-step over all pairs, each thread into its own workspace. Returns the log-likelihood.
double Ibm2Aligner::expect(const Sentences& corpus, std::vector<Workspace>& spaces) const {
  const bool cached = !corpus.link_slots.empty();
  const auto bounds = balanced_bounds(corpus.link_costs(), int(spaces.size()));
  run_parts(bounds, [&](int part, size_t begin, size_t end) {
    Workspace& w = spaces[part];
    w.reset(probs_.size(), corpus.class_positions);
    for (size_t k = begin; k < end; ++k) {
      const int n = corpus.n(k), m = corpus.m(k);
      const uint32_t *e = corpus.given_at(k), *f = corpus.generated_at(k);
      const size_t positions = corpus.class_off[corpus.length_class[k]];
      w.post.resize(n + 1);
      w.slot.resize(n + 1);
      for (int i = 1; i <= m; ++i) {
        const uint32_t* slot = w.slot.data();
        if (cached) slot = corpus.link_slots.data() + corpus.link_off[k] + size_t(i - 1) * (n + 1);
        else resolve_slots(row_start_, cols_, e, n, f[i - 1], w.slot.data());
        const double sum = score_position(probs_, slot, n, i, m, tension_, p0_, w.post.data());
        w.log_likelihood += std::log(sum);
        w.tokens += 1;
        const double null_post = w.post[0] / sum;
        w.counts[slot[0]] += null_post;
        w.null_mass += null_post;
        w.position_mass[positions + i - 1] += 1.0 - null_post;
        for (int j = 1; j <= n; ++j) {
          const double p = w.post[j] / sum;
          w.counts[slot[j]] += p;
          w.expected_feature += p * DiagonalPrior::feature(i, j, m, n);
        }
      }
    }
  });
  double total = 0;
  for (const auto& w : spaces) total += w.log_likelihood;
  return total;
}

// M-step: t(f|e) = (count(e,f) + alpha) / sum_f' (count(e,f') + alpha) over each row.
void Ibm2Aligner::maximize(const std::vector<Workspace>& spaces, double alpha) {
  std::fill(probs_.begin(), probs_.end(), 0.0);
  for (const auto& w : spaces)
    for (size_t s = 0; s < probs_.size(); ++s) probs_[s] += w.counts[s];
  for (size_t e = 0; e + 1 < row_start_.size(); ++e) {
    const size_t begin = row_start_[e], end = row_start_[e + 1];
    double total = 0;
    for (size_t s = begin; s < end; ++s) total += probs_[s] + alpha;
    if (total <= 0) continue;  // a row no sentence used: leave it as counted (zeros)
    for (size_t s = begin; s < end; ++s) probs_[s] = (probs_[s] + alpha) / total;
  }
}

// Gradient ascent on the expected complete log-likelihood in lambda: its derivative is
// sum(posterior * feature) - sum_i (non-null mass at i) * dlogZ_i / d lambda. fast_align weighs
// dlogZ by 1 per position; weighing by the non-null posterior mass is the exact gradient.
void Ibm2Aligner::optimize_tension(const Sentences& corpus, const std::vector<Workspace>& spaces) {
  std::vector<double> mass(corpus.class_positions, 0.0);
  double empirical = 0, tokens = 0;
  for (const auto& w : spaces) {
    for (size_t p = 0; p < mass.size(); ++p) mass[p] += w.position_mass[p];
    empirical += w.expected_feature;
    tokens += w.tokens;
  }
  for (int step = 0; step < kTensionSteps; ++step) {
    double model = 0;
    for (size_t c = 0; c < corpus.class_m.size(); ++c)
      for (int i = 1; i <= corpus.class_m[c]; ++i)
        model += mass[corpus.class_off[c] + i - 1] *
                 DiagonalPrior::dlogz(i, corpus.class_m[c], corpus.class_n[c], tension_);
    tension_ += kTensionRate * (empirical - model) / tokens;
    tension_ = std::min(kMaxTension, std::max(kMinTension, tension_));
  }
}

void Ibm2Aligner::train(const Corpus& src, const Corpus& tgt, const AlignOptions& options) {
  if (src.size() != tgt.size())
    throw std::invalid_argument("Ibm2Aligner::train: " + std::to_string(src.size()) +
                                " source sentences but " + std::to_string(tgt.size()) + " target");
  if (!(options.p0 >= 0 && options.p0 < 1) || !(options.initial_tension > 0) ||
      options.iterations < 0 || !(options.alpha >= 0))
    throw std::invalid_argument("Ibm2Aligner::train: need 0 <= p0 < 1, tension > 0, "
                                "iterations >= 0, alpha >= 0");
  reverse_ = options.reverse;
  p0_ = options.p0;
  tension_ = options.initial_tension;
  threads_ = resolve_threads(options.threads);
  history_.clear();
  given_words_.assign(1, "<null>");
  generated_words_.clear();
  given_ids_.clear();
  generated_ids_.clear();

  Sentences corpus = reverse_ ? intern_corpus(tgt, src) : intern_corpus(src, tgt);
  corpus.add_classes();
  build_table(corpus);
  if (corpus.size() == 0) return;
  const int parts = int(std::min<size_t>(threads_, corpus.size()));
  corpus.cache_slots(row_start_, cols_, parts);
  std::vector<Workspace> spaces(parts);
  for (int iter = 0; iter < options.iterations; ++iter) {
    const double log_likelihood = expect(corpus, spaces);
    double tokens = 0, null_mass = 0;
    for (const auto& w : spaces) tokens += w.tokens, null_mass += w.null_mass;
    if (options.optimize_tension) optimize_tension(corpus, spaces);
    maximize(spaces, options.alpha);
    history_.push_back({log_likelihood, std::exp(-log_likelihood / tokens), null_mass / tokens,
                        tension_});
  }
}

std::vector<std::vector<std::pair<int, int>>> Ibm2Aligner::align(const Corpus& src,
                                                                 const Corpus& tgt) const {
  if (src.size() != tgt.size())
    throw std::invalid_argument("Ibm2Aligner::align: " + std::to_string(src.size()) +
                                " source sentences but " + std::to_string(tgt.size()) + " target");
  const Sentences corpus = reverse_ ? lookup_corpus(tgt, src) : lookup_corpus(src, tgt);
  std::vector<std::vector<std::pair<int, int>>> links(corpus.size());
  const int parts = int(std::max<size_t>(1, std::min<size_t>(threads_, corpus.size())));
  run_parts(balanced_bounds(corpus.link_costs(), parts), [&](int, size_t begin, size_t end) {
    std::vector<double> post;
    std::vector<uint32_t> slot;
    for (size_t k = begin; k < end; ++k) {
      const int n = corpus.n(k), m = corpus.m(k);
      if (n == 0) continue;
      post.resize(n + 1);
      slot.resize(n + 1);
      for (int i = 1; i <= m; ++i) {
        resolve_slots(row_start_, cols_, corpus.given_at(k), n, corpus.generated_at(k)[i - 1],
                      slot.data());
        score_position(probs_, slot.data(), n, i, m, tension_, p0_, post.data());
        // Ties go to null, then to the earliest position (as fast_align).
        const int best = int(std::max_element(post.begin(), post.end()) - post.begin());
        if (best == 0) continue;
        if (reverse_) links[k].emplace_back(i - 1, best - 1);
        else links[k].emplace_back(best - 1, i - 1);
      }
      std::sort(links[k].begin(), links[k].end());
    }
  });
  return links;
}

std::vector<std::tuple<std::string, std::string, double>> Ibm2Aligner::translation_table(
    double min_prob) const {
  std::vector<std::tuple<std::string, std::string, double>> table;
  for (size_t e = 1; e + 1 < row_start_.size(); ++e)
    for (size_t s = row_start_[e]; s < row_start_[e + 1]; ++s)
      if (probs_[s] >= min_prob && probs_[s] > 0)
        table.emplace_back(given_words_[e], generated_words_[cols_[s]], probs_[s]);
  std::sort(table.begin(), table.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) < std::get<0>(b);
    if (std::get<2>(a) != std::get<2>(b)) return std::get<2>(a) > std::get<2>(b);
    return std::get<1>(a) < std::get<1>(b);
  });
  return table;
}

}  // namespace yoke
