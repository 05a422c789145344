// The sharing schemes and logit estimators against their formulas (Press & Wolf 2017; Liu, Zhai & Chen 2020, §2.2).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>

#include "config/config.h"
#include "embed/sharing.h"
#include "util/error.h"
#include "margin.h"

using namespace yoke;

namespace {

EmbeddingSpec small_spec(Tie tie, Estimator out, int64_t v = 11, int64_t d = 6) {
  EmbeddingSpec s;
  s.tie = tie;
  s.output = out;
  s.src_vocab = v;
  s.tgt_vocab = v;
  s.joint_vocab = true;
  s.dim = d;
  s.scale_by_sqrt_dim = false;
  return s;
}

const Estimator kEstimators[] = {Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance,
                                 Estimator::cosine};

// ℓ straight from the formulas of Liu, Zhai & Chen (2020), row by row.
at::Tensor direct_logits(Estimator e, const at::Tensor& w, const at::Tensor& h) {
  auto out = at::empty({h.size(0), w.size(0)}, at::kDouble);
  auto wd = w.to(at::kDouble), hd = h.to(at::kDouble);
  for (int64_t n = 0; n < h.size(0); ++n)
    for (int64_t i = 0; i < w.size(0); ++i) {
      const double dot = (wd[i] * hd[n]).sum().item<double>();
      const double norm = std::max(wd[i].norm().item<double>(), 1e-6);
      double v = dot;
      if (e == Estimator::l2 || e == Estimator::cosine) v = dot / norm;
      if (e == Estimator::square) v = dot / (norm * norm);
      if (e == Estimator::distance) v = dot - 0.5 * norm * norm;
      out[n][i] = v;
    }
  return out;
}

}  // namespace

class EstimatorLogits : public ::testing::TestWithParam<Estimator> {};

TEST_P(EstimatorLogits, MatchTheFormula) {
  at::manual_seed(3);
  WordEmbeddings emb(small_spec(Tie::all, GetParam()));
  auto h = at::randn({5, 6});
  auto got = emb.logits(h).to(at::kDouble);
  auto want = direct_logits(GetParam(), emb.output().full().detach(), h);
  YOKE_EXPECT_CLOSE(got, want, 1e-5, 1e-5) << name_of(GetParam());
}

TEST_P(EstimatorLogits, FactoredMatrixMatchesItsProduct) {
  at::manual_seed(4);
  auto spec = small_spec(Tie::all, GetParam(), 13, 8);
  spec.factored_rank = 3;
  WordEmbeddings emb(spec);
  auto h = at::randn({4, 8});
  auto w = emb.output().full().detach();
  EXPECT_EQ(w.size(0), 13);
  YOKE_EXPECT_CLOSE(emb.logits(h).to(at::kDouble), direct_logits(GetParam(), w, h), 1e-4, 1e-4);
  // ℓ = A(Bh): the lookup of id 5 is row 5 of A·B.
  auto ids = at::tensor({5}, at::kLong);
  auto row = emb.embed_target(ids).squeeze(0).detach();
  auto expect = GetParam() == Estimator::l2 ? w[5] / w[5].norm() : w[5];
  YOKE_EXPECT_CLOSE(row, expect, 1e-5, 1e-5);
}

TEST_P(EstimatorLogits, ZeroRowIsSafe) {
  WordEmbeddings emb(small_spec(Tie::all, GetParam()));
  {
    at::NoGradGuard g;
    emb.output().weight.zero_();
  }
  auto h = at::randn({3, 6});
  auto logits = emb.logits(h);
  auto ids = at::tensor({0, 1}, at::kLong);
  auto loss = logits.sum() + emb.embed_target(ids).sum();
  loss.backward();
  EXPECT_TRUE(at::isfinite(logits).all().item<bool>());
  EXPECT_TRUE(at::isfinite(emb.output().weight.grad()).all().item<bool>());
}

TEST_P(EstimatorLogits, TiedGradientIsSumOfBothPaths) {
  at::manual_seed(5);
  WordEmbeddings emb(small_spec(Tie::all, GetParam()));
  auto& w = emb.output().weight;
  auto ids = at::tensor({1, 4, 4, 7}, at::kLong);
  auto h = at::randn({3, 6});
  auto c = at::randn({4, 6});  // arbitrary downstream weights on the looked-up rows
  auto path_a = [&] { return (emb.embed_target(ids) * c).sum(); };
  auto path_b = [&] { return at::log_softmax(emb.logits(h), -1).select(1, 2).sum(); };
  (path_a() + path_b()).backward();
  auto both = w.grad().clone();
  w.mutable_grad().zero_();
  path_a().backward();
  auto ga = w.grad().clone();
  w.mutable_grad().zero_();
  path_b().backward();
  auto gb = w.grad().clone();
  YOKE_EXPECT_CLOSE(both, ga + gb, 1e-5, 1e-6);
  EXPECT_GT(ga.abs().sum().item<double>(), 0);
  EXPECT_GT(gb.abs().sum().item<double>(), 0);
}

// The probe behind `log_grad_paths`: what it records per path equals the gradients computed
// one path at a time, for every estimator, and tracking changes no gradient.
TEST_P(EstimatorLogits, GradientPathProbeRecordsEachPath) {
  at::manual_seed(9);
  WordEmbeddings emb(small_spec(Tie::all, GetParam()));
  auto& w = emb.output().weight;
  auto ids = at::tensor({1, 4, 4, 7, 9}, at::kLong);
  auto h = at::randn({3, 6});
  auto c = at::randn({5, 6});
  auto path_a = [&] { return (emb.embed_source(ids) * c).sum(); };
  auto path_b = [&] { return at::log_softmax(emb.logits(h), -1).select(1, 2).sum(); };
  path_a().backward();
  auto ga = w.grad().clone();
  w.mutable_grad().zero_();
  path_b().backward();
  auto gb = w.grad().clone();
  w.mutable_grad().zero_();

  emb.track_gradient_paths(true);
  (path_a() + path_b()).backward();
  YOKE_EXPECT_CLOSE(w.grad(), ga + gb, 1e-5, 1e-6);
  const auto paths = emb.take_gradient_paths();
  const double a2 = ga.pow(2).sum().item<double>(), b2 = gb.pow(2).sum().item<double>();
  YOKE_EXPECT_NEAR(paths.input_sq, a2, 1e-4 * a2);
  YOKE_EXPECT_NEAR(paths.output_sq, b2, 1e-4 * b2);
  YOKE_EXPECT_NEAR(paths.share_output(), b2 / (a2 + b2), 1e-5);
  YOKE_EXPECT_NEAR(paths.cosine_ab, at::cosine_similarity(ga.reshape(-1), gb.reshape(-1), 0).item<double>(), 1e-4);
  // Taken means cleared; no-grad passes record nothing.
  EXPECT_EQ(emb.take_gradient_paths().input_sq, 0.0);
  {
    at::NoGradGuard no_grad;
    path_a();
  }
  EXPECT_EQ(emb.take_gradient_paths().input_sq, 0.0);
}

TEST(GradientPaths, UntiedMatricesHaveNoCrossTerm) {
  at::manual_seed(10);
  WordEmbeddings emb(small_spec(Tie::none, Estimator::dot));
  emb.track_gradient_paths(true);
  auto ids = at::tensor({1, 2, 3}, at::kLong);
  ((emb.embed_target(ids) * at::randn({3, 6})).sum() + emb.logits(at::randn({2, 6})).pow(2).sum()).backward();
  const auto p = emb.take_gradient_paths();
  YOKE_EXPECT_NEAR(p.input_sq, emb.target().weight.grad().pow(2).sum().item<double>(), 1e-5 * p.input_sq);
  YOKE_EXPECT_NEAR(p.output_sq, emb.output().weight.grad().pow(2).sum().item<double>(), 1e-5 * p.output_sq);
  EXPECT_TRUE(std::isnan(p.cosine_ab));
}

// Without autograd (decoding) the estimator's row terms are computed once and kept
// (embed/derived_cache.h): repeated calls give, bit for bit, what a fresh computation gives.
TEST_P(EstimatorLogits, KeptWithoutAutogradAndBitIdentical) {
  for (int64_t rank : {0, 3}) {
    at::manual_seed(11);
    auto spec = small_spec(Tie::all, GetParam(), 13, 8);
    spec.factored_rank = rank;
    WordEmbeddings emb(spec);
    auto h = at::randn({5, 8});
    auto ids = at::tensor({1, 4, 7, 12}, at::kLong);
    // With autograd on nothing is kept: these are the uncached numbers.
    const auto logits = emb.logits(h).detach(), rows = emb.embed_target(ids).detach();
    const auto parts = emb.logit_parts(h);
    const auto affine = emb.affine_logits();
    YOKE_EXPECT_CLOSE(logits.to(at::kDouble), direct_logits(GetParam(), emb.output().full().detach(), h), 1e-4,
                             1e-4);
    at::NoGradGuard no_grad;
    auto same = [](const at::Tensor& a, const at::Tensor& b) {
      return a.defined() == b.defined() && (!a.defined() || at::equal(a, b.detach()));
    };
    for (int call = 0; call < 2; ++call) {
      EXPECT_TRUE(at::equal(emb.logits(h), logits)) << name_of(GetParam()) << " rank " << rank << " call " << call;
      EXPECT_TRUE(at::equal(emb.embed_target(ids), rows)) << name_of(GetParam()) << " call " << call;
      const auto p = emb.logit_parts(h);
      EXPECT_TRUE(same(p.h, parts.h) && same(p.matrix, parts.matrix) && same(p.scale, parts.scale) &&
                  same(p.bias, parts.bias))
          << name_of(GetParam()) << " rank " << rank << " call " << call;
      const auto a = emb.affine_logits();
      EXPECT_TRUE(same(a.matrix, affine.matrix) && same(a.bias, affine.bias))
          << name_of(GetParam()) << " rank " << rank << " call " << call;
    }
  }
}

// A kept value follows every change of the weights the version counter sees: an in-place edit
// (an optimizer step, a checkpoint load, averaging), a new dtype (model.to(...)). Were the
// versions ignored, logits() after an edit would return the numbers from before it. The
// reference is the free estimate_logits, which keeps nothing.
TEST_P(EstimatorLogits, KeptValueFollowsInPlaceEditsAndDtype) {
  for (int64_t rank : {0, 3}) {
    at::manual_seed(12);
    auto spec = small_spec(Tie::all, GetParam(), 13, 8);
    spec.factored_rank = rank;
    WordEmbeddings emb(spec);
    auto h = at::randn({5, 8});
    auto uncached = [&] { return estimate_logits(GetParam(), emb.output(), h); };
    at::NoGradGuard no_grad;
    const auto before = emb.logits(h);
    EXPECT_TRUE(at::equal(emb.logits(h), before));  // the same numbers again, now from what was kept
    for (auto& p : emb.parameters()) p.mul_(at::rand(p.sizes()) + 0.5);  // new norms, not a rescaling
    const auto after = emb.logits(h);
    EXPECT_FALSE(at::allclose(after, before, 1e-3, 1e-3)) << name_of(GetParam()) << " rank " << rank;
    EXPECT_TRUE(at::equal(after, uncached())) << name_of(GetParam()) << " rank " << rank;
    YOKE_EXPECT_CLOSE(after.to(at::kDouble), direct_logits(GetParam(), emb.output().full(), h), 1e-4, 1e-4)
        << name_of(GetParam()) << " rank " << rank;
    // A single cell.
    (rank ? emb.output().factor_a : emb.output().weight)[4][1].add_(1.0);
    const auto one_cell = emb.logits(h);
    EXPECT_FALSE(at::equal(one_cell.select(1, 4), after.select(1, 4))) << name_of(GetParam()) << " rank " << rank;
    EXPECT_TRUE(at::equal(one_cell, uncached())) << name_of(GetParam()) << " rank " << rank;
    // model.to(dtype): new storage of another type, never the float value kept before.
    emb.to(at::kDouble);
    h = h.to(at::kDouble);
    const auto dbl = emb.logits(h);
    EXPECT_EQ(dbl.scalar_type(), at::kDouble);
    EXPECT_TRUE(at::equal(dbl, uncached())) << name_of(GetParam()) << " rank " << rank;
  }
}

// Kept means not recomputed: a write that bypasses the version counter (.data() makes a tensor
// with a counter of its own; yoke writes no parameter that way) is not seen until a versioned
// write, or until a pass with autograd on, which keeps nothing and releases what was kept.
// dot keeps nothing.
TEST_P(EstimatorLogits, KeptValueIsReusedUntilAVersionChanges) {
  if (GetParam() == Estimator::dot) GTEST_SKIP() << "dot has no row terms";
  at::manual_seed(13);
  WordEmbeddings emb(small_spec(Tie::all, GetParam(), 13, 8));
  auto h = at::randn({5, 8});
  auto& w = emb.output().weight;
  auto uncached = [&] { return estimate_logits(GetParam(), emb.output(), h); };
  at::NoGradGuard no_grad;
  for (bool versioned : {true, false}) {
    emb.logits(h);
    const auto version = w._version();
    w.data().add_(at::randn({13, 8}));  // row terms change; the counter does not
    ASSERT_EQ(w._version(), version);
    const auto unseen = emb.logits(h);
    EXPECT_FALSE(at::allclose(unseen, uncached(), 1e-3, 1e-3)) << name_of(GetParam());
    if (versioned) {
      w.add_(0.0);  // a versioned write, no change of value
    } else {
      at::AutoGradMode grad(true);
      emb.logits(h);
    }
    const auto seen = emb.logits(h);
    EXPECT_TRUE(at::equal(seen, uncached())) << name_of(GetParam()) << (versioned ? " after add_" : " after autograd");
    YOKE_EXPECT_CLOSE(seen.to(at::kDouble), direct_logits(GetParam(), w, h), 1e-4, 1e-4);
  }
}

// Gradients after a no-grad pass filled the cache: the same as from a fresh model, to every
// parameter (autograd on keeps nothing and never reads what was kept).
TEST_P(EstimatorLogits, GradientsAfterANoGradPassAreUnchanged) {
  auto run = [&](bool decode_first) {
    at::manual_seed(14);
    WordEmbeddings emb(small_spec(Tie::all, GetParam(), 13, 8));
    auto h = at::randn({5, 8});
    auto ids = at::tensor({1, 4, 7, 12}, at::kLong);
    if (decode_first) {
      at::NoGradGuard no_grad;
      emb.logits(h);
      emb.embed_target(ids);
    }
    (at::log_softmax(emb.logits(h), -1).select(1, 3).sum() + emb.embed_target(ids).pow(2).sum()).backward();
    return emb.output().weight.grad().clone();
  };
  const auto fresh = run(false), after = run(true);
  EXPECT_GT(fresh.abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(at::equal(fresh, after)) << name_of(GetParam());
}

INSTANTIATE_TEST_SUITE_P(AllEstimators, EstimatorLogits, ::testing::ValuesIn(kEstimators),
                         [](const auto& info) { return std::string(name_of(info.param)); });

TEST(InputGradScale, ScalesOnlyTheLookupPath) {
  auto spec = small_spec(Tie::all, Estimator::dot);
  at::manual_seed(6);
  WordEmbeddings plain(spec);
  spec.input_grad_scale = 0.25;
  WordEmbeddings scaled(spec);
  {
    at::NoGradGuard g;
    scaled.output().weight.copy_(plain.output().weight);
  }
  auto ids = at::tensor({2, 3, 3}, at::kLong);
  auto h = at::randn({2, 6});
  // Forward unchanged: x·α + x·(1−α) rounds twice, so within 2 ulp (2.4e-7 relative) of x.
  YOKE_EXPECT_CLOSE(plain.embed_target(ids), scaled.embed_target(ids), 3e-7, 0.0);
  // Path A scaled by α.
  plain.embed_target(ids).pow(2).sum().backward();
  scaled.embed_target(ids).pow(2).sum().backward();
  YOKE_EXPECT_CLOSE(scaled.output().weight.grad(), 0.25 * plain.output().weight.grad(), 1e-6, 1e-7);
  // Path B untouched.
  plain.output().weight.mutable_grad().zero_();
  scaled.output().weight.mutable_grad().zero_();
  plain.logits(h).pow(2).sum().backward();
  scaled.logits(h).pow(2).sum().backward();
  YOKE_EXPECT_CLOSE(scaled.output().weight.grad(), plain.output().weight.grad(), 1e-6, 1e-7);
}

TEST(EstimatorProperties, IdentityHoldsForL2AndCosine) {
  at::manual_seed(7);
  for (Estimator e : {Estimator::l2, Estimator::cosine}) {
    auto spec = small_spec(Tie::all, e, 50, 16);
    WordEmbeddings emb(spec);
    {
      at::NoGradGuard g;
      emb.output().weight.mul_(at::rand({50, 1}) * 3 + 0.1);  // very different norms
    }
    auto w = emb.output().full().detach();
    for (int64_t k = 1; k < 50; ++k) {
      // h = w_k (for l2 the matrix is the normalized one, so h = w_k/‖w_k‖).
      auto h = e == Estimator::l2 ? (w[k] / w[k].norm()).unsqueeze(0) : w[k].unsqueeze(0);
      EXPECT_EQ(emb.logits(h).argmax(-1).item<int64_t>(), k) << name_of(e) << " k=" << k;
    }
  }
}

TEST(EstimatorProperties, DotLacksIdentityWhenNormsDiffer) {
  auto spec = small_spec(Tie::all, Estimator::dot, 3, 2);
  WordEmbeddings emb(spec);
  {
    at::NoGradGuard g;
    emb.output().weight.copy_(at::tensor({0.0f, 0.0f, 1.0f, 0.0f, 3.0f, 0.5f}).view({3, 2}));
  }
  auto h = emb.output().weight[1].detach().unsqueeze(0);  // h = w_1, but w_2 has a larger norm
  EXPECT_EQ(emb.logits(h).argmax(-1).item<int64_t>(), 2);
}

TEST(EstimatorProperties, NormalityHoldsForL2) {
  at::manual_seed(8);
  WordEmbeddings emb(small_spec(Tie::all, Estimator::l2, 40, 12));
  {
    at::NoGradGuard g;
    emb.output().weight.mul_(5);
  }
  auto h = at::randn({200, 12});
  h = h / h.norm(2, {1}, true) * at::rand({200, 1});  // ‖h‖ ≤ 1
  EXPECT_LE(emb.logits(h).max().item<double>(), 1.0 + 1e-6);
  // and dot does not have it
  WordEmbeddings dot(small_spec(Tie::all, Estimator::dot, 40, 12));
  {
    at::NoGradGuard g;
    dot.output().weight.copy_(emb.output().weight);
  }
  EXPECT_GT(dot.logits(h).max().item<double>(), 1.0);
}

// Seed 001 §2.2's two properties for all five estimators, each with a case where it fails.
// Identity (h = w_k ⇒ k = argmax) holds for l2, cosine and distance whatever the norms (distance:
// w_i·w_k − ½‖w_i‖² = ½‖w_k‖² − ½‖w_i − w_k‖², largest at i = k); the seed says square has it
// too unless two rows are parallel, but w_k = (3, 0), w_i = (1, 0.1) breaks it without being
// parallel: 3/1.01 > 9/9. Normality (every logit ≤ 1) under the seed's premise that h is a convex
// combination of the rows the model embeds with: only l2 has it.
// Seed 001 §2.2, property 3: l2's logit ŵ_i · h is an unbiased estimate of α_i when h = Σ_j α_j ŵ_j
// and the rows are "uniformly i.i.d. on unit sphere" (E ŵ_i · ŵ_j = 0 for i ≠ j). Averaged over
// 3000 draws of such rows, every logit lands on its α; with rows that share a mean direction (as
// trained rows do: docs/results/seed001-sphere-cpu300) the estimate is biased upwards.
TEST(EstimatorProperties, L2IsUnbiasedOnlyForRowsUniformOnTheSphere) {
  at::manual_seed(11);
  const int64_t V = 12, d = 16;
  const auto alpha = at::softmax(at::randn({V}) * 2, 0);
  auto mean_logits = [&](double shared_direction) {
    auto emb = std::make_shared<WordEmbeddings>(small_spec(Tie::all, Estimator::l2, V, d));
    const auto mu = at::ones({1, d}) / std::sqrt(double(d));
    at::Tensor sum = at::zeros({V});
    const int draws = 3000;
    for (int k = 0; k < draws; ++k) {
      const auto g = at::randn({V, d}) + shared_direction * std::sqrt(double(d)) * mu;
      const auto unit = g / g.norm(2, {1}, true);
      {
        at::NoGradGuard no_grad;
        emb->output().weight.copy_(unit);
      }
      const auto h = at::matmul(alpha.unsqueeze(0), unit);
      sum += emb->logits(h).squeeze(0).detach();
    }
    return sum / draws;
  };
  // Uniform rows: ℓ_i − α_i has variance Σ_{j≠i} α_j² / d ≤ 1/16, so its mean over 3000 draws has
  // SD ≤ 0.0046; 0.025 is more than 5 SDs.
  const auto uniform = mean_logits(0.0);
  YOKE_EXPECT_AT_MOST((uniform - alpha).abs().max().item<double>(), 0.025) << uniform << alpha;
  // A shared direction: E ŵ_i · ŵ_j ≈ 0.2 > 0, every logit over-estimated by about 0.2 (1 − α_i),
  // ≥ 0.08 here; the floor 0.02 is over 4 SDs of the mean's noise.
  const auto shared = mean_logits(0.5);
  YOKE_EXPECT_AT_LEAST((shared - alpha).min().item<double>(), 0.02) << shared << alpha;
}

TEST(EstimatorProperties, IdentityAndNormalityOfAllFive) {
  auto with_rows = [](Estimator e, const at::Tensor& rows) {
    auto emb = std::make_shared<WordEmbeddings>(small_spec(Tie::all, e, rows.size(0), rows.size(1)));
    at::NoGradGuard g;
    emb->output().weight.copy_(rows);
    return emb;
  };
  auto argmax_at = [](const WordEmbeddings& emb, const at::Tensor& h) {
    return emb.logits(h.unsqueeze(0)).argmax(-1).item<int64_t>();
  };
  const auto counter = at::tensor({-1.0f, -1.0f, 3.0f, 0.0f, 1.0f, 0.1f}).view({3, 2});  // w_k = row 1, w_i = row 2
  const std::map<Estimator, bool> identity = {{Estimator::dot, false}, {Estimator::l2, true}, {Estimator::square, false},
                                              {Estimator::distance, true}, {Estimator::cosine, true}};
  for (const auto& [e, holds] : identity) {
    auto emb = with_rows(e, counter);
    // h = w_j for the matrix the estimator embeds with (l2: the normalised row), for each row j.
    bool all_found = true;
    for (int64_t j = 0; j < 3; ++j) {
      const auto h = e == Estimator::l2 ? counter[j] / counter[j].norm() : counter[j];
      all_found &= argmax_at(*emb, h) == j;
    }
    EXPECT_EQ(all_found, holds) << name_of(e);
  }
  // Where identity holds, it holds on random rows of very different norms too.
  at::manual_seed(3);
  const auto rows = at::randn({40, 8}) * (at::rand({40, 1}) * 4 + 0.1);
  for (Estimator e : {Estimator::l2, Estimator::distance, Estimator::cosine}) {
    auto emb = with_rows(e, rows);
    for (int64_t k = 1; k < 40; ++k) {
      const auto h = e == Estimator::l2 ? rows[k] / rows[k].norm() : rows[k];
      EXPECT_EQ(argmax_at(*emb, h), k) << name_of(e) << " k=" << k;
    }
  }
  // Normality: h = Σ α_i w_i with α a probability vector, over the rows as embedded.
  const auto alpha = at::softmax(at::randn({100, 40}) * 3, -1);
  for (Estimator e : {Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance, Estimator::cosine}) {
    auto emb = with_rows(e, rows);
    const auto embedded = e == Estimator::l2 ? rows / rows.norm(2, {1}, true) : rows;
    const double top = emb->logits(at::matmul(alpha, embedded)).max().item<double>();
    if (e == Estimator::l2)
      EXPECT_LE(top, 1.0 + 1e-6);  // float rounding of a norm-1 product
    else
      EXPECT_GT(top, 1.0) << name_of(e) << " has no normality";
  }
}

TEST(Sharing, TiedRolesAreOneObject) {
  WordEmbeddings none(small_spec(Tie::none, Estimator::dot));
  EXPECT_NE(none.source(), &none.target());
  EXPECT_NE(&none.target(), &none.output());
  WordEmbeddings dec(small_spec(Tie::decoder, Estimator::dot));
  EXPECT_NE(dec.source(), &dec.target());
  EXPECT_EQ(&dec.target(), &dec.output());
  WordEmbeddings all(small_spec(Tie::all, Estimator::dot));
  EXPECT_EQ(all.source(), &all.target());
  EXPECT_EQ(&all.target(), &all.output());
  WordEmbeddings st(small_spec(Tie::src_tgt, Estimator::dot));
  EXPECT_EQ(st.source(), &st.target());
  EXPECT_NE(&st.target(), &st.output());
  // Parameters registered once: the module's parameter count is the closed form.
  for (Tie t : {Tie::none, Tie::decoder, Tie::all, Tie::src_tgt}) {
    WordEmbeddings e(small_spec(t, Estimator::dot));
    int64_t n = 0;
    for (auto& p : e.parameters()) n += p.numel();
    EXPECT_EQ(n, count_embeddings(e.spec()).emb) << name_of(t);
  }
}

// Exact counts (integers, no BLAS) against the seeds' printed figures: each tolerance is the
// rounding of the printed number, not float noise, so these are plain EXPECT_NEARs (margin.h is
// for thresholds that a kernel family or training can approach).
TEST(Accounting, ClosedForms) {
  auto s = small_spec(Tie::none, Estimator::dot, 8000, 256);
  EXPECT_EQ(count_embeddings(s).emb, 3 * 8000 * 256);
  s.tie = Tie::decoder;
  EXPECT_EQ(count_embeddings(s).emb, 2 * 8000 * 256);
  EXPECT_NEAR(count_embeddings(s).red(), 1.0 / 3, 1e-12);
  s.tie = Tie::all;
  EXPECT_EQ(count_embeddings(s).emb, 8000 * 256);
  EXPECT_NEAR(count_embeddings(s).red(), 2.0 / 3, 1e-12);
  s.factored_rank = 64;
  EXPECT_EQ(count_embeddings(s).emb, 64 * (8000 + 256));
  s.factored_rank = 0;
  s.tie = Tie::src_tgt;
  EXPECT_EQ(count_embeddings(s).emb, 2 * 8000 * 256);
  // A language model: E_t and U only.
  auto lm = s;
  lm.src_vocab = 0;
  lm.tie = Tie::none;
  EXPECT_EQ(count_embeddings(lm).emb, 2 * 8000 * 256);
  lm.tie = Tie::all;
  EXPECT_NEAR(count_embeddings(lm).red(), 0.5, 1e-12);
}

// Seed 004's two worked exercises, recomputed with yoke's accounting. Its arithmetic slips:
// Exercise 1(b) says tying saves "about 11%" of the untied model's parameters at V = 32,000,
// d = 1,024, L = 12; its own formula f = Vd / (2Vd + 12Ld²) gives 15.1%. Exercise 4(c) calls the
// rank-128 factorisation of ALBERT-large's 30,000 × 1,024 matrix "roughly an 8.7x reduction";
// 30,720,000 / 3,971,072 is 7.7×. Its other numbers hold: Vd = 32,768,000 saved; V/d > 9L for a
// share above 30%; 57.5M saved against two full matrices.
TEST(Accounting, Seed004ExercisesFromTheClosedForms) {
  Config c;
  c.task = Task::lm;
  c.tgt_vocab_size = 32000;
  c.d_model = 1024;
  c.decoder_layers = 12;
  c.tie = Tie::none;
  // The untied model's word share is 2Vd / (2Vd + 12Ld²); tying saves half of it: Vd / (2Vd + 12Ld²).
  const double saved = *embedding_fraction_closed_form(c) / 2;
  EXPECT_NEAR(100 * saved, 15.13, 0.01);  // not "about 11%"
  // Exercise 1(a): the saving itself, counted on the spec (tied against untied word matrices).
  auto lm = small_spec(Tie::none, Estimator::dot, 32000, 1024);
  lm.src_vocab = 0;
  const int64_t untied = count_embeddings(lm).emb;
  lm.tie = Tie::all;
  EXPECT_EQ(untied - count_embeddings(lm).emb, 32768000);
  // 1(b)'s threshold: the share passes 30% where V/d passes 9L (108 at L = 12).
  for (const double ratio : {107.0, 109.0}) {
    c.tgt_vocab_size = int(ratio * 1024);
    EXPECT_EQ(*embedding_fraction_closed_form(c) / 2 > 0.3, ratio > 108) << ratio;
  }
  // Exercise 4(c): ALBERT-large, V = 30,000, d = 1,024, k = 128.
  auto albert = small_spec(Tie::all, Estimator::dot, 30000, 1024);
  albert.src_vocab = 0;
  const double full = double(count_embeddings(albert).emb);
  albert.factored_rank = 128;
  const double factored = double(count_embeddings(albert).emb);
  EXPECT_EQ(factored, 3971072.0);
  EXPECT_NEAR(full / factored, 7.74, 0.005);  // not "roughly 8.7x"
  EXPECT_NEAR((2 * full - factored) / 1e6, 57.5, 0.05);
}

TEST(Accounting, Seed003Tables) {
  // Zh⇒En (table 1): 30K vocabularies both sides, d = 512. Vanilla Emb. 46.1M, decoder WT 30.7M.
  auto s = small_spec(Tie::decoder, Estimator::dot, 30000, 512);
  s.joint_vocab = false;
  EXPECT_NEAR(count_embeddings(s).emb / 1e6, 30.7, 0.05);
  EXPECT_NEAR(count_embeddings(s).emb_untied / 1e6, 46.1, 0.05);
  EXPECT_NEAR(100 * count_embeddings(s).red(), 33.3, 0.1);  // the paper prints 33.4 from rounded M
  // En⇒De (table 2): three-way WT on a joint ~36.9K vocabulary, Emb. 18.9M, against a vanilla model
  // with separate ~35.0K/35.7K vocabularies (Emb. 54.5M): Red. 65.3%.
  auto t = small_spec(Tie::all, Estimator::dot, 36914, 512);
  auto c = count_embeddings(t, 34961, 35742);
  EXPECT_NEAR(c.emb / 1e6, 18.9, 0.05);
  EXPECT_NEAR(c.emb_untied / 1e6, 54.5, 0.05);
  EXPECT_NEAR(100 * c.red(), 65.3, 0.05);
}

// Seed 003's Emb. for shared-private (Tables 1, 4, 5; NIST Zh⇒En, 30K words a side, d = 512, every
// word paired): d · Σ_c (2 − λ_c) n_c from each table's pair counts, counted by the layout itself.
// The tables print millions to one decimal; yoke rounds λ·d to whole columns (461 for 0.9·512),
// which moves a count by < 0.01M.
TEST(Accounting, Seed003SharedPrivateFromThePairCounts) {
  auto emb = [](std::array<int, 3> n, std::array<double, 3> lambda) {
    SharedPrivateLayout l;
    l.src_vocab = l.tgt_vocab = 30000;
    l.dim = 512;
    l.lambda = lambda;
    int id = 0;
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < n[size_t(c)]; ++k, ++id) l.pairs[size_t(c)].push_back({id, id});
    EXPECT_EQ(id, 30000);
    return double(l.parameter_count()) / 1e6;
  };
  // Table 5: (lm, wf, ur) pairs at alignment thresholds 0.5, 0.1, 0.05, λ = (0.9, 0.7, 0.5).
  EXPECT_NEAR(emb({4869, 309, 24822}, {0.9, 0.7, 0.5}), 22.01, 0.01);  // printed 22.0M
  EXPECT_NEAR(emb({15103, 23, 14874}, {0.9, 0.7, 0.5}), 19.94, 0.01);  // printed 20.0M
  EXPECT_NEAR(emb({21172, 11, 8817}, {0.9, 0.7, 0.5}), 18.70, 0.01);   // printed 18.7M, also Table 1
  // Table 4: the λ settings on the 0.05 pairs.
  EXPECT_NEAR(emb({21172, 11, 8817}, {0.5, 0.7, 0.9}), 21.23, 0.01);  // printed 21.2M
  EXPECT_NEAR(emb({21172, 11, 8817}, {0.5, 0.5, 0.5}), 23.04, 0.01);  // printed 23.0M
  EXPECT_NEAR(emb({21172, 11, 8817}, {0.9, 0.7, 0.0}), 20.96, 0.01);  // printed 21.0M
  EXPECT_NEAR(emb({21172, 11, 8817}, {1.0, 1.0, 1.0}), 15.36, 0.01);  // printed 15.3M: cut, not rounded
  EXPECT_NEAR(emb({21172, 11, 8817}, {0.0, 0.0, 0.0}), 30.72, 0.01);  // printed 30.7M = decoder WT
}

// Seed 004 §1.1: "at 70M total parameters with V = 32,000 and d = 512, the embedding matrices alone
// consume 2 · 32,000 · 512 ≈ 33M parameters — roughly 47% of the model"; §5.1's table of Iyer et
// al.'s untied embedding fractions, 73.4%, 20.6%, 9.2% at 70M, 1B, 2.8B, from the closed form
// 2Vd / (2Vd + 12Ld²) with the Pythia models' shapes (V = 50,304; (d, L) = (512, 6), (2048, 16),
// (2560, 32)), which the seed does not print: 73.2%, 20.4%, 9.3%, each within 0.25 points (12Ld²
// leaves out biases and norms, which real counts have).
TEST(Accounting, Seed004SharesFromTheClosedForms) {
  EXPECT_EQ(2 * 32000 * 512, 32768000);
  EXPECT_NEAR(32768000.0 / 70e6, 0.47, 0.005);
  Config c;
  c.task = Task::lm;
  c.tie = Tie::none;
  c.tgt_vocab_size = 50304;
  const std::array<std::array<double, 3>, 3> rows = {{{512, 6, 73.4}, {2048, 16, 20.6}, {2560, 32, 9.2}}};
  for (const auto& [d, layers, printed] : rows) {
    c.d_model = int(d);
    c.decoder_layers = int(layers);
    EXPECT_NEAR(100 * *embedding_fraction_closed_form(c), printed, 0.25) << "d " << d;
  }
}

// Seed 004 Exercise 2: T = 3, V = 4, d = 2, tokens (2, 1, 2, 3), W tied. Against autograd on a
// small recurrent model h_t = tanh(M e_{x_t} + N h_{t−1}): ∂L/∂w_2 = h̄_1 + h̄_3 (path A) +
// Σ_t (p_t(2) − 1[x_{t+1} = 2]) h_t (path B), where the indicator is 1 at t = 2 (x_3 = 2), as the
// solution's text says; its formula puts the −1 at t = 3 instead, (p_2(2) − 0) h_2 + (p_3(2) − 1) h_3,
// which differs by h_3 − h_2. ∂L/∂w_4 = Σ_t p_t(4) h_t (token 4 is never an input) is right.
TEST(Accounting, Seed004Exercise2GradientAgainstAutograd) {
  at::manual_seed(7);
  const auto W = at::randn({4, 2}, at::kDouble).requires_grad_();
  const auto M = at::randn({2, 2}, at::kDouble), N = at::randn({2, 2}, at::kDouble);
  const std::vector<int64_t> tokens = {1, 0, 1, 2};  // (2, 1, 2, 3), 0-based
  std::vector<at::Tensor> e, h, p;
  at::Tensor prev = at::zeros({2}, at::kDouble), loss = at::zeros({}, at::kDouble);
  for (int t = 0; t < 3; ++t) {
    e.push_back(W[tokens[size_t(t)]]);
    e.back().retain_grad();
    prev = at::tanh(at::mv(M, e.back()) + at::mv(N, prev));
    h.push_back(prev);
    const auto logp = at::log_softmax(at::mv(W, prev), 0);
    p.push_back(logp.exp().detach());
    loss = loss - logp[tokens[size_t(t) + 1]];
  }
  loss.backward();
  const auto g = W.grad();
  const auto hbar1 = e[0].grad(), hbar3 = e[2].grad();
  auto hd = [&](int t) { return h[size_t(t)].detach(); };
  auto pt = [&](int t, int j) { return p[size_t(t)][j].item<double>(); };
  // Row 2 (index 1): path A at inputs 1 and 3, path B with the indicator at t = 2.
  const auto right = hbar1 + hbar3 + pt(0, 1) * hd(0) + (pt(1, 1) - 1) * hd(1) + pt(2, 1) * hd(2);
  EXPECT_TRUE(at::allclose(g[1], right, 1e-12, 1e-12)) << g[1] << right;  // double precision throughout
  const auto printed = hbar1 + hbar3 + pt(0, 1) * hd(0) + pt(1, 1) * hd(1) + (pt(2, 1) - 1) * hd(2);
  EXPECT_GT((g[1] - printed).abs().max().item<double>(), 1e-3);  // the solution's formula is off by h_3 − h_2
  EXPECT_TRUE(at::allclose(g[1] - printed, hd(2) - hd(1), 1e-12, 1e-12));
  // Row 4 (index 3): path B only.
  const auto row4 = pt(0, 3) * hd(0) + pt(1, 3) * hd(1) + pt(2, 3) * hd(2);
  EXPECT_TRUE(at::allclose(g[3], row4, 1e-12, 1e-12));
}

TEST(Sharing, ThreeWayNeedsAJointVocabulary) {
  Config c;
  c.tie = Tie::all;
  c.src_vocab_size = 8000;
  c.tgt_vocab_size = 9000;
  c.joint_vocab = false;
  try {
    EmbeddingSpec::from_config(c);
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("joint"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--joint"), std::string::npos) << e.what();
  }
  c.tie = Tie::decoder;
  EXPECT_NO_THROW(EmbeddingSpec::from_config(c));
}
