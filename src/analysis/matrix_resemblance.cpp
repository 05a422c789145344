#include "analysis/matrix_resemblance.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <limits>
#include <random>

#include "analysis/norm_prediction.h"
#include "analysis/sphere_uniformity.h"
#include "store/model_store.h"
#include "util/checksum.h"
#include "util/error.h"
#include "util/portable_random.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

// min(count, n) distinct indices of 0..n−1, drawn from `seed` (all of them, in order, when count ≥ n).
at::Tensor sample_indices(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int64_t> ids(size_t(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) ids[size_t(i)] = i;
  if (count < n) {
    std::mt19937_64 rng(seed);
    // The first `count` places of a partial Fisher–Yates shuffle.
    for (int64_t i = 0; i < count; ++i)
      std::swap(ids[size_t(i)], ids[size_t(i + int64_t(uniform_below(rng, uint64_t(n - i))))]);
    ids.resize(size_t(count));
    std::sort(ids.begin(), ids.end());
  }
  return at::tensor(ids, at::kLong);
}

// The k nearest rows (by cosine, the query itself left out) of each query: [queries, k].
at::Tensor nearest(const at::Tensor& unit, const at::Tensor& queries, int64_t k) {
  constexpr int64_t chunk = 256;  // 256 × n similarities at a time
  std::vector<at::Tensor> parts;
  for (int64_t start = 0; start < queries.numel(); start += chunk) {
    auto q = queries.slice(0, start, std::min(queries.numel(), start + chunk));
    auto sim = at::matmul(unit.index_select(0, q), unit.t());
    sim.scatter_(1, q.unsqueeze(1), -std::numeric_limits<double>::infinity());
    parts.push_back(std::get<1>(sim.topk(k, 1)));
  }
  return at::cat(parts);
}

bool same_file_contents(const std::string& a, const std::string& b) {
  return fs::file_size(a) == fs::file_size(b) && file_crc32(a) == file_crc32(b);
}

}  // namespace

double linear_cka(const at::Tensor& x, const at::Tensor& y) {
  at::NoGradGuard no_grad;
  auto a = x.detach().to(at::kCPU, at::kDouble), b = y.detach().to(at::kCPU, at::kDouble);
  a = a - a.mean(0, true);
  b = b - b.mean(0, true);
  const double cross = at::matmul(b.t(), a).pow(2).sum().item<double>();
  const double aa = at::matmul(a.t(), a).norm().item<double>(), bb = at::matmul(b.t(), b).norm().item<double>();
  if (aa == 0 || bb == 0) return std::numeric_limits<double>::quiet_NaN();
  return cross / (aa * bb);
}

double knn_overlap(const at::Tensor& a, const at::Tensor& b, const at::Tensor& queries, int64_t k) {
  at::NoGradGuard no_grad;
  if (queries.numel() == 0 || k <= 0) return std::numeric_limits<double>::quiet_NaN();
  const auto na = nearest(unit_rows(a), queries, k).contiguous(), nb = nearest(unit_rows(b), queries, k).contiguous();
  const int64_t* pa = na.data_ptr<int64_t>();
  const int64_t* pb = nb.data_ptr<int64_t>();
  int64_t shared = 0;
  for (int64_t q = 0; q < queries.numel(); ++q) {
    std::vector<int64_t> x(pa + q * k, pa + (q + 1) * k), y(pb + q * k, pb + (q + 1) * k);
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    std::vector<int64_t> both;
    std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
    shared += int64_t(both.size());
  }
  return double(shared) / double(queries.numel() * k);
}

Resemblance matrix_resemblance(const at::Tensor& tied, const at::Tensor& input, const at::Tensor& output,
                               const ResemblanceOptions& o) {
  at::NoGradGuard no_grad;
  const int64_t n = tied.size(0);
  if (input.size(0) != n || output.size(0) != n)
    throw std::invalid_argument("matrix_resemblance: the three matrices must have the same rows (word ids)");
  Resemblance r;
  r.words = n;
  r.k = std::min<int64_t>(o.k, std::max<int64_t>(n - 1, 0));
  const double nan = std::numeric_limits<double>::quiet_NaN();

  // The same pairs for every matrix.
  const auto [first, second] = distinct_pairs(n, o.pairs, o.seed);
  r.pairs = first.numel();
  const auto cw = pair_cosines(unit_rows(tied), first, second);
  const auto ce = pair_cosines(unit_rows(input), first, second);
  const auto cu = pair_cosines(unit_rows(output), first, second);
  r.spearman_input = spearman(cw, ce);
  r.spearman_output = spearman(cw, cu);
  r.spearman_input_output = spearman(ce, cu);

  // A seed of its own for the query words, so they do not depend on how many pairs were drawn.
  const auto queries = sample_indices(n, o.knn_words, o.seed ^ 0x6b6e6e);
  r.knn_words = queries.numel();
  r.knn_input = r.k > 0 ? knn_overlap(tied, input, queries, r.k) : nan;
  r.knn_output = r.k > 0 ? knn_overlap(tied, output, queries, r.k) : nan;
  r.knn_input_output = r.k > 0 ? knn_overlap(input, output, queries, r.k) : nan;
  r.knn_chance = n > 1 ? double(r.k) / double(n - 1) : nan;

  r.cka_input = linear_cka(tied, input);
  r.cka_output = linear_cka(tied, output);
  r.cka_input_output = linear_cka(input, output);

  auto row_cosine = [&](const at::Tensor& other) {
    if (other.size(1) != tied.size(1) || n == 0) return nan;
    return (unit_rows(tied) * unit_rows(other)).sum(1).mean().item<double>();
  };
  r.row_cosine_input = row_cosine(input);
  r.row_cosine_output = row_cosine(output);
  return r;
}

ComparedModel compared_model(const LoadedModel& m, const std::string& path) {
  const WordEmbeddings& emb = *m.model->embeddings;
  ComparedModel c;
  c.path = path;
  c.task = m.config.task;
  c.tie = name_of(emb.spec().tie);
  c.target_is_output = &emb.target() == &emb.output();
  c.target_vocab = emb.output().vocab();
  c.vocab_file = m.tgt_vocab.path();
  return c;
}

void check_resemblance_pair(const ComparedModel& tied, const ComparedModel& untied) {
  if (!tied.target_is_output)
    throw InputError("--model " + tied.path + " has tie " + tied.tie +
                     ": its target embedding and output are two matrices; --model must be the tied model "
                     "(tie all or decoder) and --against the untied one (tie none)");
  if (untied.target_is_output)
    throw InputError("--against " + untied.path + " has tie " + untied.tie +
                     ": its target embedding and output are one matrix; --against must be an untied model "
                     "(tie none), whose separate input and output matrices the tied one is compared with");
  if (tied.task != untied.task)
    throw InputError("--model " + tied.path + " is a " + (tied.task == Task::lm ? "language" : "translation") +
                     " model but --against " + untied.path + " is a " +
                     (untied.task == Task::lm ? "language" : "translation") + " model: compare models of one task");
  if (tied.target_vocab != untied.target_vocab)
    throw InputError("the vocabularies differ in size: --model " + tied.path + " has " +
                     std::to_string(tied.target_vocab) + " target words, --against " + untied.path + " has " +
                     std::to_string(untied.target_vocab) +
                     "; rows are matched by word id, so both models need the same vocabulary");
  if (!same_file_contents(tied.vocab_file, untied.vocab_file))
    throw InputError("the SentencePiece vocabularies differ: " + tied.vocab_file + " and " + untied.vocab_file +
                     " are not the same file; rows are matched by word id, so both models need the same vocabulary");
  auto vocab_text = [](const std::string& model_file) { return fs::path(model_file).replace_extension(".vocab"); };
  const fs::path a = vocab_text(tied.vocab_file), b = vocab_text(untied.vocab_file);
  if (fs::exists(a) && fs::exists(b) && !same_file_contents(a.string(), b.string()))
    throw InputError("the SentencePiece vocabularies differ: " + a.string() + " and " + b.string() +
                     " are not the same file; rows are matched by word id, so both models need the same vocabulary");
}

}  // namespace yoke
