// Direct bridging (model/direct_bridge.h, loss/batch_loss.cpp): the term and its gradient against
// the formula written out with loops, zero weight against the plain model, the alignment against
// the cross-attention of step-by-step decoding, and the combinations the method does not define.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "batch/batch.h"
#include "loss/batch_loss.h"
#include "store/model_store.h"
#include "tiny_model.h"
#include "util/error.h"
#include "margin.h"

using namespace yoke;
using yoke::test::tiny_config;

namespace {

// Random pairs over ids 4..23, lengths 2..7 (the source one longer than the target, so that
// alignments are not the diagonal by construction).
TokenizedCorpus random_pairs(size_t n, uint64_t seed) {
  at::manual_seed(seed);
  TokenizedCorpus c;
  for (size_t i = 0; i < n; ++i) {
    const int64_t len = at::randint(2, 8, {1}).item<int64_t>();
    std::vector<int> src, tgt;
    for (int64_t j = 0; j <= len; ++j) src.push_back(int(at::randint(4, 24, {1}).item<int64_t>()));
    for (int64_t j = 0; j < len; ++j) tgt.push_back(int(at::randint(4, 24, {1}).item<int64_t>()));
    c.add(src, tgt);
  }
  return c;
}

Batch some_batch() {
  static const TokenizedCorpus corpus = random_pairs(6, 5);
  return make_batch(corpus, {0, 1, 2, 3, 4, 5});
}

Config bridging_config(Tie tie, Arch arch = Arch::transformer, double weight = 1.0) {
  Config c = tiny_config(tie);
  c.arch = arch;
  if (arch != Arch::transformer) c.encoder_kernels = c.decoder_kernels = "3";
  c.bridging = Bridging::direct;
  c.bridging_weight = weight;
  return c;
}

std::shared_ptr<Transformer> seeded_model(const Config& c) {
  at::manual_seed(7);
  auto m = build_model(c);
  m->eval();  // no dropout: the same forward pass every time
  return m;
}

// Gradients of every parameter after backward of `loss`, by name.
std::map<std::string, at::Tensor> grads_of(Transformer& m, const at::Tensor& loss) {
  m.zero_grad();
  loss.backward();
  std::map<std::string, at::Tensor> g;
  for (const auto& p : m.named_parameters(true))
    g[p.key()] = p.value().grad().defined() ? p.value().grad().clone() : at::zeros_like(p.value());
  return g;
}

}  // namespace

// ℓ = Σ_t ‖W·x_{t*} − y_t‖², with t* taken from the model's attention and everything else
// written out in doubles: the value, and its gradient with respect to W (2 Σ r xᵀ), the source
// rows (2 Wᵀ r) and the target rows (−2 r), r = W·x − y. The model's gradient of the term is the
// difference of the gradients at weight 1 and weight 0 (the cross-entropy part is the same
// computation in both). Tolerance 1e-4 relative: float32 sums of a few hundred products against
// doubles, through one subtraction of two backward passes.
TEST(DirectBridging, TermAndGradientMatchTheFormulaWrittenOut) {
  for (Tie tie : {Tie::none, Tie::decoder}) {
    SCOPED_TRACE(name_of(tie));
    auto model = seeded_model(bridging_config(tie));
    const Batch b = some_batch();
    const LossSums with = batch_loss(*model, b, 0.1, 1.0);
    ASSERT_TRUE(with.bridge.defined());
    auto g1 = grads_of(*model, with.loss);
    auto g0 = grads_of(*model, batch_loss(*model, b, 0.1, 0.0).loss);

    at::Tensor attention;
    {
      at::NoGradGuard ng;
      auto enc = model->encode(b.src);
      model->decode(b.tgt_in, &enc, &attention);
    }
    const auto W = model->bridge->weight.detach().to(at::kDouble);
    const auto E_s = model->embeddings->source()->full().detach().to(at::kDouble);
    const auto E_t = model->embeddings->target().full().detach().to(at::kDouble);
    double value = 0;
    auto dW = at::zeros_like(W), dE_s = at::zeros_like(E_s), dE_t = at::zeros_like(E_t);
    for (int64_t i = 0; i < b.tgt_out.size(0); ++i)
      for (int64_t t = 0; t < b.tgt_out.size(1); ++t) {
        const int64_t y_id = b.tgt_out[i][t].item<int64_t>();
        if (y_id == 0) continue;  // padding
        int64_t best = 0;
        for (int64_t j = 1; j < attention.size(2); ++j)
          if (attention[i][t][j].item<double>() > attention[i][t][best].item<double>()) best = j;
        const int64_t x_id = b.src[i][best].item<int64_t>();
        ASSERT_NE(x_id, 0) << "the alignment chose a padding position";
        const auto x = E_s[x_id], y = E_t[y_id];
        const auto r = at::mv(W, x) - y;
        value += r.pow(2).sum().item<double>();
        dW += 2 * at::outer(r, x);
        dE_s[x_id] += 2 * at::mv(W.t(), r);
        dE_t[y_id] -= 2 * r;
      }
    YOKE_EXPECT_NEAR(with.bridge.item<double>(), value, 1e-4 * value);
    auto close = [](const at::Tensor& got, const at::Tensor& want) {
      const double scale = want.abs().max().item<double>();
      return (got.to(at::kDouble) - want).abs().max().item<double>() <= 1e-4 * scale;
    };
    EXPECT_TRUE(close(g1.at("bridge.weight") - g0.at("bridge.weight"), dW));
    const std::string src_name = "embeddings.source.weight";
    const std::string tgt_name = "embeddings.target.weight";  // tie = decoder: the target matrix is the output
    ASSERT_TRUE(g1.count(src_name) && g1.count(tgt_name)) << "parameter names changed";
    EXPECT_TRUE(close(g1.at(src_name) - g0.at(src_name), dE_s));
    EXPECT_TRUE(close(g1.at(tgt_name) - g0.at(tgt_name), dE_t));
  }
}

// bridging_weight = 0 adds 0·ℓ to the loss, and W is created after every other parameter, so a
// model with the bridge and the plain model start from the same weights and compute the same
// loss and gradients bit for bit (x + 0·y = x in IEEE arithmetic for finite y).
TEST(DirectBridging, ZeroWeightGivesThePlainModelsLossExactly) {
  for (Arch arch : {Arch::transformer, Arch::lightconv}) {
    SCOPED_TRACE(name_of(arch));
    Config plain = bridging_config(Tie::decoder, arch);
    plain.bridging = Bridging::none;
    auto a = seeded_model(bridging_config(Tie::decoder, arch, 0.0));
    auto p = seeded_model(plain);
    const Batch b = some_batch();
    const LossSums la = batch_loss(*a, b, 0.1, 0.0), lp = batch_loss(*p, b, 0.1, 0.0);
    EXPECT_GT(la.bridge.item<double>(), 0.0);
    EXPECT_FALSE(lp.bridge.defined());
    EXPECT_EQ(la.loss.item<double>(), lp.loss.item<double>());
    const auto ga = grads_of(*a, la.loss), gp = grads_of(*p, lp.loss);
    for (const auto& [name, g] : gp) EXPECT_TRUE(at::equal(ga.at(name), g)) << name;
    EXPECT_EQ(count_parameters(*a) - count_parameters(*p), 16 * 16) << "W is d×d";
  }
}

// The alignment is the source position the decoder's cross-attention weighs most: the
// teacher-forced attention that chooses it equals, position by position, the attention that
// step-by-step decoding reports (DecoderState::keep_attention, a separate code path), and
// most_attended_source is its argmax. Tolerance 1e-5: the same softmax over the same keys, with
// the queries computed for the whole sequence at once or one step at a time.
TEST(DirectBridging, AlignmentIsTheArgmaxOfTheCrossAttention) {
  for (Arch arch : {Arch::transformer, Arch::dynamicconv}) {
    SCOPED_TRACE(name_of(arch));
    auto model = seeded_model(bridging_config(Tie::none, arch));
    at::NoGradGuard ng;
    const Batch b = some_batch();
    auto enc = model->encode(b.src);
    at::Tensor summed;
    model->decode(b.tgt_in, &enc, &summed);
    const double per = double(model->spec().decoder_layers * model->spec().layer.heads);
    const auto teacher = summed / per;  // [B, T, S]
    DecoderState s = model->start(&enc);
    s.keep_attention = true;
    for (int64_t t = 0; t < b.tgt_in.size(1); ++t) {
      model->step(b.tgt_in.select(1, t), s);
      YOKE_EXPECT_CLOSE(s.attention, teacher.select(1, t), 0, 1e-5) << "step " << t;
    }
    const auto aligned = most_attended_source(summed);
    // Exact: teacher is summed divided by layers × heads = 4, a power of two, which keeps every
    // value's order, so both argmaxes are the same integers on any machine.
    EXPECT_TRUE(at::equal(aligned, teacher.argmax(-1)));
    // Padding (probability 0) is never chosen while a real token is there.
    const auto src_len = b.src.ne(0).sum(1);
    EXPECT_TRUE(aligned.lt(src_len.unsqueeze(1)).all().item<bool>());
  }
}

TEST(DirectBridging, ArgmaxPicksTheLargestWeight) {
  const auto a = at::tensor({0.1f, 0.7f, 0.2f, 0.0f, 0.3f, 0.3f, 0.4f, 0.0f}).view({1, 2, 4});
  const auto got = most_attended_source(a);
  EXPECT_EQ(got[0][0].item<int64_t>(), 1);
  EXPECT_EQ(got[0][1].item<int64_t>(), 2);
}

TEST(DirectBridging, RefusesCombinationsTheMethodDoesNotDefine) {
  for (Tie tie : {Tie::all, Tie::src_tgt, Tie::shared_private}) {
    Config c = bridging_config(tie);
    try {
      c.validate();
      ADD_FAILURE() << "tie " << name_of(tie) << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("tie = none or decoder"), std::string::npos) << e.what();
    }
  }
  Config lm = bridging_config(Tie::none);
  lm.task = Task::lm;
  EXPECT_THROW(lm.validate(), InputError);
  for (Tie tie : {Tie::none, Tie::decoder}) EXPECT_NO_THROW(bridging_config(tie).validate());
}
