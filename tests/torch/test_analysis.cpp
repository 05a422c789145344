// The measurements of `yoke analyze` against values worked out directly: estimator identity and
// normality (Liu, Zhai & Chen 2020, §2.2), tying gap (Press & Wolf 2017), norm statistics and 2-D PCA.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/model_analysis.h"
#include "analysis/norm_prediction.h"
#include "analysis/pca.h"
#include "analysis/properties.h"
#include "margin.h"

using namespace yoke;

namespace {

EmbeddingSpec small_spec(Tie tie, Estimator out, int64_t v = 20, int64_t d = 8, bool lm = false) {
  EmbeddingSpec s;
  s.tie = tie;
  s.output = out;
  s.src_vocab = lm ? 0 : v;
  s.tgt_vocab = v;
  s.joint_vocab = !lm;
  s.dim = d;
  s.scale_by_sqrt_dim = false;
  return s;
}

// A full (unfactored) matrix holding exactly `rows`.
std::shared_ptr<WordMatrix> matrix_of(const at::Tensor& rows) {
  auto m = std::make_shared<WordMatrix>(rows.size(0), rows.size(1), 0, 0);
  at::NoGradGuard g;
  m->weight.copy_(rows);
  return m;
}

// Four special rows at zero, then the given word rows.
at::Tensor with_specials(const at::Tensor& words) {
  return at::cat({at::zeros({kFirstWordId, words.size(1)}), words});
}

// Identity counted by hand: for each word k, is w_i·w_k largest at i = k (dot estimator)?
double direct_dot_identity(const at::Tensor& w) {
  auto wd = w.to(at::kDouble);
  int hits = 0, words = 0;
  for (int64_t k = kFirstWordId; k < wd.size(0); ++k, ++words) {
    int64_t best = 0;
    double best_score = -INFINITY;
    for (int64_t i = 0; i < wd.size(0); ++i) {
      const double s = (wd[i] * wd[k]).sum().item<double>();
      if (s > best_score) best_score = s, best = i;
    }
    hits += best == k;
  }
  return double(hits) / words;
}

}  // namespace

TEST(AnalysisIdentity, IsOneForNormalisingEstimators) {
  at::manual_seed(11);
  auto m = matrix_of(at::randn({60, 16}));
  EXPECT_DOUBLE_EQ(identity_fraction(Estimator::l2, *m), 1.0);
  EXPECT_DOUBLE_EQ(identity_fraction(Estimator::cosine, *m), 1.0);
  EXPECT_DOUBLE_EQ(identity_fraction(Estimator::cosine, *m, /*chunk=*/7), 1.0);
}

TEST(AnalysisIdentity, DotFailsWhenLongNearlyParallelRowsOutvoteShortOnes) {
  // Words 4..7: norm ≈ 1 around e₀; words 8..11: norm exactly 10, also around e₀. For a short
  // word, w_long·w_k ≈ 10 > ‖w_k‖² ≈ 1, so a long row wins; a long word wins against its equally
  // long, non-parallel neighbours (Cauchy–Schwarz). Expected identity: 4 of 8.
  auto words = at::zeros({8, 4});
  for (int64_t i = 0; i < 8; ++i) {
    words[i][0] = 1.0;
    words[i][1 + i % 3] = 0.05 * double(1 + i / 3);
    if (i >= 4) words[i] = words[i] * (10.0 / words[i].norm().item<double>());
  }
  const auto w = with_specials(words);
  const double expected = direct_dot_identity(w);
  EXPECT_DOUBLE_EQ(expected, 0.5);
  auto m = matrix_of(w);
  EXPECT_DOUBLE_EQ(identity_fraction(Estimator::dot, *m), expected);
  EXPECT_DOUBLE_EQ(identity_fraction(Estimator::dot, *m, /*chunk=*/3), expected);
  // The same rows under a normalising estimator: every word is its own argmax.
  EXPECT_DOUBLE_EQ(identity_fraction(Estimator::cosine, *m), 1.0);
}

TEST(AnalysisNormality, L2StaysAtMostOneAndReachesIt) {
  at::manual_seed(12);
  auto m = matrix_of(at::randn({80, 16}) * 5.0);
  const double top = normality_max_logit(Estimator::l2, *m, 1000, 7, /*chunk=*/64);
  EXPECT_LE(top, 1.0 + 1e-6);
  YOKE_EXPECT_NEAR(top, 1.0, 1e-5);  // h = w_k/‖w_k‖ gives exactly 1
}

TEST(AnalysisNormality, DotExceedsOneWithLargeRowsAndPeaksAtTheLargestNorm) {
  at::manual_seed(13);
  auto rows = at::randn({40, 12});
  rows[17] = rows[17] * (20.0 / rows[17].norm().item<double>());  // far longer than any other row
  auto m = matrix_of(rows);
  const double top = normality_max_logit(Estimator::dot, *m, 1000, 7);
  EXPECT_GT(top, 1.0);
  YOKE_EXPECT_NEAR(top, 20.0, 1e-4);  // max over unit h of w_i·h is ‖w_i‖, reached at h = w_17/‖w_17‖
  // Chunking only changes which GEMM kernel sums each 12-term float32 dot product, so the two
  // maxima differ by rounding: ≲ 12·2^-24·‖w‖‖h‖ = 12·6e-8·20 ≈ 1.4e-5 (seen: 2e-6 under
  // OPENBLAS_CORETYPE=Haswell). Losing the chunk that holds w_17/‖w_17‖ drops the maximum by ≫ 1.
  YOKE_EXPECT_NEAR(normality_max_logit(Estimator::dot, *m, 1000, 7),
              normality_max_logit(Estimator::dot, *m, 1000, 7, /*chunk=*/5), 2e-5);
}

TEST(AnalysisTyingGap, IsOneWhenOutputCopiesTarget) {
  at::manual_seed(14);
  WordEmbeddings emb(small_spec(Tie::none, Estimator::dot, 30, 16));
  {
    at::NoGradGuard g;
    emb.output().weight.copy_(emb.target().weight * 3.0);  // cosine ignores scale
  }
  auto gap = tying_gap(emb);
  ASSERT_TRUE(gap.has_value());
  // Exactly 1 only if the zero padding row is left out (it would count as cosine 0).
  YOKE_EXPECT_NEAR(*gap, 1.0, 1e-12);

  {
    at::NoGradGuard g;
    emb.output().weight[9].neg_();  // one word of 26 now has cosine −1
  }
  YOKE_EXPECT_NEAR(*tying_gap(emb), 24.0 / 26.0, 1e-12);
}

TEST(AnalysisTyingGap, IsNearZeroForIndependentRows) {
  at::manual_seed(15);
  WordEmbeddings emb(small_spec(Tie::none, Estimator::dot, 404, 64));
  auto gap = tying_gap(emb);
  ASSERT_TRUE(gap.has_value());
  YOKE_EXPECT_AT_MOST(std::fabs(*gap), 0.05);  // mean of 400 cosines with sd 1/8: sd ≈ 0.006
}

TEST(AnalysisTyingGap, AppliesOnlyWhenTargetAndOutputDiffer) {
  EXPECT_FALSE(tying_gap(WordEmbeddings(small_spec(Tie::decoder, Estimator::dot))).has_value());
  EXPECT_FALSE(tying_gap(WordEmbeddings(small_spec(Tie::all, Estimator::dot))).has_value());
  EXPECT_TRUE(tying_gap(WordEmbeddings(small_spec(Tie::src_tgt, Estimator::dot))).has_value());
  EXPECT_TRUE(tying_gap(WordEmbeddings(small_spec(Tie::none, Estimator::dot, 20, 8, true))).has_value());
}

TEST(AnalysisMatrices, TiedMatrixAppearsOnceNamedByItsRoles) {
  auto names = [](Tie tie, bool lm = false) {
    WordEmbeddings emb(small_spec(tie, Estimator::dot, 20, 8, lm));
    std::vector<std::string> out;
    for (const auto& m : distinct_matrices(emb)) out.push_back(m.name);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(Tie::none), (V{"source", "target", "output"}));
  EXPECT_EQ(names(Tie::decoder), (V{"source", "shared (target=output)"}));
  EXPECT_EQ(names(Tie::all), (V{"shared (source=target=output)"}));
  EXPECT_EQ(names(Tie::src_tgt), (V{"shared (source=target)", "output"}));
  EXPECT_EQ(names(Tie::all, true), (V{"shared (target=output)"}));
  EXPECT_EQ(names(Tie::none, true), (V{"target", "output"}));
}

TEST(AnalysisNorms, StatisticsOfWordRowsOnly) {
  auto words = at::zeros({3, 2});
  words[0][0] = 3.0;                    // ‖·‖ = 3
  words[1][0] = 3.0, words[1][1] = 4.0;  // 5
  words[2][1] = 4.0;                    // 4
  auto rows = with_specials(words);
  rows[1][0] = 100.0;  // a special row: must not count
  auto norms = word_row_norms(*matrix_of(rows));
  ASSERT_EQ(norms.size(), 3u);
  const NormStats s = norm_stats(norms);
  YOKE_EXPECT_NEAR(s.mean, 4.0, 1e-9);
  YOKE_EXPECT_NEAR(s.std, std::sqrt(2.0 / 3.0), 1e-9);
  YOKE_EXPECT_NEAR(s.min, 3.0, 1e-9);
  YOKE_EXPECT_NEAR(s.max, 5.0, 1e-9);
}

TEST(PcaTwoD, RecoversPointsOnAPlaneUpToRotation) {
  at::manual_seed(16);
  // 60 points on an affine 2-D plane in 10-D, given as two matrices.
  auto basis = std::get<0>(at::linalg_qr(at::randn({10, 2}, at::kDouble))).t();  // [2, 10] orthonormal
  auto coords = at::randn({60, 2}, at::kDouble) * at::tensor({3.0, 1.0}, at::kDouble);
  auto points = at::matmul(coords, basis) + at::randn({1, 10}, at::kDouble) * 4.0;
  const Pca2d pca = pca_2d({points.slice(0, 0, 25), points.slice(0, 25)});
  ASSERT_EQ(pca.projected.size(), 2u);
  EXPECT_EQ(pca.projected[0].size(0), 25);
  EXPECT_EQ(pca.projected[1].size(0), 35);
  auto flat = at::cat(pca.projected);
  auto distances = [](const at::Tensor& x) { return (x.unsqueeze(0) - x.unsqueeze(1)).norm(2, {2}); };
  YOKE_EXPECT_AT_MOST((distances(flat) - distances(points)).abs().max().item<double>(), 1e-6);
  YOKE_EXPECT_NEAR(pca.explained[0] + pca.explained[1], 1.0, 1e-9);
  EXPECT_GT(pca.explained[0], pca.explained[1]);
  YOKE_EXPECT_CLOSE(at::matmul(pca.axes, pca.axes.t()), at::eye(2, at::kDouble), 1e-9, 1e-9);
}

TEST(PcaTwoD, FirstAxisFollowsTheLargestSpread) {
  // Points along e₃ with a little spread along e₇: PC1 is ±e₃, made positive.
  auto points = at::zeros({5, 8}, at::kDouble);
  for (int64_t i = 0; i < 5; ++i) points[i][3] = double(i) * 2.0, points[i][7] = (i % 2) * 0.1;
  const Pca2d pca = pca_2d({points});
  YOKE_EXPECT_NEAR(pca.axes[0][3].item<double>(), 1.0, 1e-9);
  YOKE_EXPECT_NEAR(std::fabs(pca.axes[1][7].item<double>()), 1.0, 1e-6);
}

// Spearman's ρ against values worked out by hand: a monotone relation is 1 whatever its shape,
// reversed it is −1, and ties take their mean rank (ranks 0, 1.5, 1.5, 3 against 0..3 give
// ρ = 4.5 / √(4.5 · 5) = 0.9487).
TEST(NormPrediction, SpearmanOfHandWorkedCases) {
  YOKE_EXPECT_NEAR(spearman({1, 2, 3, 4}, {1, 8, 27, 64}), 1.0, 1e-12);
  YOKE_EXPECT_NEAR(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0, 1e-12);
  YOKE_EXPECT_NEAR(spearman({0, 1, 1, 2}, {0, 1, 2, 3}), 4.5 / std::sqrt(4.5 * 5.0), 1e-12);
  EXPECT_TRUE(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));
}

// Over-prediction rises with the row norm by construction: ρ = 1; words absent from both texts
// and the special ids are not counted.
TEST(NormPrediction, CountsOnlyWordsThatOccurAndRanksTheirOverPrediction) {
  //                         pad unk bos eos   a    b    c    d    e (absent)
  const std::vector<double> norms = {9, 9, 9, 9, 1.0, 2.0, 3.0, 4.0, 5.0};
  const std::vector<int64_t> hyp = {5, 5, 5, 5, 1, 3, 9, 20, 0};
  const std::vector<int64_t> ref = {0, 0, 0, 0, 4, 4, 4, 4, 0};
  const NormPrediction p = norm_vs_prediction(norms, hyp, ref);
  EXPECT_EQ(p.words, 4);
  YOKE_EXPECT_NEAR(p.spearman_overprediction, 1.0, 1e-12);
  EXPECT_TRUE(std::isnan(p.spearman_reference_frequency));  // every reference count is 4
  EXPECT_THROW(norm_vs_prediction(norms, {1, 2}, ref), std::invalid_argument);
}

// analysis.json's mapping (analysis/model_analysis.h): "no value" is null, optional parts are
// absent when not measured, per-matrix statistics are keyed by the matrix's name.
TEST(ModelAnalysisJson, NoValueIsNullAndUnmeasuredPartsAreAbsent) {
  ModelAnalysis a;
  a.estimator = "dot";
  a.tie = "all";
  a.identity = 0.5;
  a.norms["shared"] = NormStats{1.0, 0.25, 0.5, 2.0};
  a.pictures = {"norms.svg"};
  nlohmann::json j = to_json(a);
  EXPECT_TRUE(j.at("normality_max_logit").is_null());  // NaN
  EXPECT_TRUE(j.at("tying_gap").is_null());
  EXPECT_FALSE(j.contains("against"));
  EXPECT_FALSE(j.contains("norm_vs_prediction"));
  EXPECT_EQ(j.at("norms").at("shared").at("std").get<double>(), 0.25);  // stored, not computed
  EXPECT_EQ(j.at("identity").get<double>(), 0.5);
  EXPECT_EQ(j.at("pictures"), nlohmann::json::array({"norms.svg"}));
  a.tying_gap = 0.125;
  a.norm_vs_prediction = NormPrediction{7, 0.5, NAN, -0.25};
  a.against = AgainstModel{"runs/untied", "runs/untied/checkpoint_best.ykp", "none", Resemblance{}};
  j = to_json(a);
  EXPECT_EQ(j.at("tying_gap").get<double>(), 0.125);
  EXPECT_EQ(j.at("norm_vs_prediction").at("words").get<int64_t>(), 7);
  EXPECT_TRUE(j.at("norm_vs_prediction").at("spearman_reference_frequency").is_null());
  EXPECT_EQ(j.at("against").at("tie"), "none");
  EXPECT_EQ(j.at("against").at("model"), "runs/untied");
}
