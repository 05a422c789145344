// Transformer, search, optimizer and checkpoints on small random models.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "config/config.h"
#include "embed/initial_values.h"
#include "decode/search.h"
#include "decode/batched_decoding.h"
#include "loss/loss.h"
#include "text/vocab.h"
#include "copy_task.h"
#include "tiny_model.h"
#include "store/checkpoint.h"
#include "util/error.h"
#include "train/flat_adam.h"
#include "store/model_store.h"
#include "margin.h"

using namespace yoke;
using yoke::test::random_source;
using yoke::test::tiny_config;
using yoke::test::train_copy_task;

// Incremental decoding against full decoding, beam reordering included: test_conv.cpp
// (ConvModel.IncrementalDecodingEqualsFullDecodingUnderBeamReordering, every architecture).

TEST(Transformer, CrossLayerSharesOneSetOfWeights) {
  auto cfg = tiny_config();
  cfg.encoder_layers = cfg.decoder_layers = 4;
  auto deep = build_model(cfg);
  cfg.cross_layer = true;
  auto shared = build_model(cfg);
  cfg.cross_layer = false;
  cfg.encoder_layers = cfg.decoder_layers = 1;
  auto one = build_model(cfg);
  auto count = [](const auto& m) { int64_t n = 0; for (auto& p : m->parameters()) n += p.numel(); return n; };
  EXPECT_EQ(count(shared), count(one));
  EXPECT_GT(count(deep), count(one));
}

TEST(Search, BeamOfOneEqualsGreedy) {
  at::manual_seed(3);
  auto model = build_model(tiny_config());
  model->eval();
  auto src = random_source(5, 8, 24, 4);
  SearchOptions o;
  o.beam = 1;
  auto greedy = greedy_search(*model, src, o);
  auto beam1 = beam_search(*model, src, o);
  EXPECT_EQ(greedy, beam1);
}

TEST(Search, BatchingDoesNotChangeOutput) {
  at::manual_seed(5);
  auto model = build_model(tiny_config(Tie::decoder, Estimator::cosine));
  model->eval();
  std::vector<std::vector<int>> sources;
  auto src = random_source(9, 10, 24, 6);
  for (int64_t i = 0; i < 9; ++i) {
    std::vector<int> s;
    for (int64_t j = 0; src[i][j].item<int64_t>() != Vocab::eos; ++j) s.push_back(int(src[i][j].item<int64_t>()));
    sources.push_back(s);
  }
  for (int beam : {1, 4}) {
    SearchOptions o;
    o.beam = beam;
    auto batched = translate_ids(*model, sources, o, 100000);
    for (size_t i = 0; i < sources.size(); ++i) {
      auto alone = translate_ids(*model, {sources[i]}, o, 100000);
      EXPECT_EQ(alone[0], batched[i]) << "beam " << beam << " sentence " << i;
    }
  }
}

TEST(Search, BeamFindsAtLeastTheGreedyScore) {
  at::manual_seed(7);
  auto model = build_model(tiny_config());
  model->eval();
  auto src = random_source(6, 8, 24, 8);
  SearchOptions g, b;
  g.beam = 1;
  b.beam = 6;
  b.lenpen = 0.0;  // compare raw log-probabilities
  auto score = [&](const at::Tensor& row, const std::vector<int>& hyp) {
    at::NoGradGuard ng;
    auto enc = model->encode(row.unsqueeze(0));
    auto state = model->start(&enc);
    double total = 0;
    int64_t prev = Vocab::bos;
    std::vector<int> seq = hyp;
    seq.push_back(Vocab::eos);
    for (int tok : seq) {
      auto lp = at::log_softmax(model->logits(model->step(at::tensor({prev}, at::kLong), state)), -1);
      total += lp[0][tok].item<double>();
      prev = tok;
    }
    return total;
  };
  auto gh = greedy_search(*model, src, g);
  auto bh = beam_search(*model, src, b);
  for (int64_t i = 0; i < 6; ++i) {
    if (gh[i].size() + 1 >= size_t(1.2 * 8 + 10)) continue;  // greedy hit the length limit
    EXPECT_GE(score(src[i], bh[i]) + 1e-4, score(src[i], gh[i])) << "sentence " << i;
  }
}

TEST(Loss, LabelSmoothingMatchesDefinition) {
  at::manual_seed(9);
  auto logits = at::randn({7, 10});
  auto target = at::randint(0, 10, {7});
  const double eps = 0.1;
  auto out = label_smoothed_loss(logits, target, eps);
  auto lp = at::log_softmax(logits.to(at::kDouble), -1);
  double want = 0, nll = 0;
  for (int64_t n = 0; n < 7; ++n)
    for (int64_t v = 0; v < 10; ++v) {
      const bool gold = v == target[n].item<int64_t>();
      const double q = gold ? 1 - eps : eps / 9;
      want -= q * lp[n][v].item<double>();
      if (gold) nll -= lp[n][v].item<double>();  // picked by index, not by comparing doubles
    }
  YOKE_EXPECT_NEAR(out.loss.item<double>(), want, 1e-4);
  YOKE_EXPECT_NEAR(out.nll.item<double>(), nll, 1e-4);
}

TEST(FlatAdam, MatchesTextbookAdam) {
  at::manual_seed(10);
  auto a = at::randn({3, 4}).requires_grad_();
  auto b = at::randn({5}).requires_grad_();
  auto ra = a.detach().clone().to(at::kDouble), rb = b.detach().clone().to(at::kDouble);
  FlatAdam opt({a, b}, AdamOptions{0.9, 0.98, 1e-8, 0.0});
  std::vector<at::Tensor> m = {at::zeros_like(ra), at::zeros_like(rb)}, v = m;
  std::vector<at::Tensor> ref = {ra, rb};
  v = {at::zeros_like(ra), at::zeros_like(rb)};
  for (int step = 1; step <= 5; ++step) {
    opt.zero_grad();
    ((a * a).sum() + (b.pow(3)).sum()).backward();
    std::vector<at::Tensor> g = {2 * ref[0], 3 * ref[1] * ref[1]};
    opt.step(0.01);
    for (int i = 0; i < 2; ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.98 * v[i] + 0.02 * g[i] * g[i];
      auto mh = m[i] / (1 - std::pow(0.9, step)), vh = v[i] / (1 - std::pow(0.98, step));
      ref[i] = ref[i] - 0.01 * mh / (vh.sqrt() + 1e-8);
    }
  }
  YOKE_EXPECT_CLOSE(a.detach().to(at::kDouble), ref[0], 1e-5, 1e-6);
  YOKE_EXPECT_CLOSE(b.detach().to(at::kDouble), ref[1], 1e-5, 1e-6);
}

TEST(Checkpoint, RoundTripsAModel) {
  const auto path = std::filesystem::temp_directory_path() / "yoke_ckpt_test.ykp";
  at::manual_seed(11);
  auto a = build_model(tiny_config(Tie::none, Estimator::l2));
  Checkpoint c;
  c.meta = {{"hello", 1}};
  for (auto& [k, t] : module_state(*a)) c.tensors[k] = t;
  save_checkpoint(path.string(), c);
  at::manual_seed(12);
  auto b = build_model(tiny_config(Tie::none, Estimator::l2));
  auto loaded = load_checkpoint(path.string());
  load_module_state(*b, loaded.tensors, path.string());
  EXPECT_EQ(loaded.meta.at("hello"), 1);
  for (auto& [k, t] : module_state(*a)) EXPECT_TRUE(at::equal(t, module_state(*b).at(k))) << k;
  std::filesystem::remove(path);
}

// load_model builds a model under SkipInitialValues and copies the file's weights into it: the
// build draws nothing from the generator, yet makes the parameters and buffers a normal build makes.
TEST(InitialValues, AModelBuiltToBeLoadedDrawsNothing) {
  std::vector<Config> configs = {tiny_config(Tie::all, Estimator::dot), tiny_config(Tie::none, Estimator::l2)};
  configs[1].positions = Positions::learned;
  configs[1].factored_rank = 4;
  for (Arch arch : {Arch::lightconv, Arch::dynamicconv}) {
    configs.push_back(tiny_config(Tie::decoder, Estimator::dot));
    configs.back().arch = arch;
    configs.back().encoder_kernels = configs.back().decoder_kernels = "3,5";
  }
  // The generator's next draws are compared exactly: one generator from one seed, the same code path,
  // gives the same bits on every processor and thread count.
  for (const auto& cfg : configs) {
    const std::string what = cfg.to_json().dump();
    at::manual_seed(5);
    const auto drawn = at::randn({8});
    at::manual_seed(5);
    std::shared_ptr<Transformer> unset;
    {
      const SkipInitialValues skip;
      EXPECT_TRUE(SkipInitialValues::active());
      {
        const SkipInitialValues nested;
      }
      EXPECT_TRUE(SkipInitialValues::active()) << "a nested guard ended the outer one";
      unset = build_model(cfg);
    }
    EXPECT_FALSE(SkipInitialValues::active());
    EXPECT_TRUE(at::equal(at::randn({8}), drawn)) << "the build drew values: " << what;
    at::manual_seed(5);
    build_unset_model(cfg);
    EXPECT_TRUE(at::equal(at::randn({8}), drawn)) << "build_unset_model drew values: " << what;

    at::manual_seed(5);
    const auto initialised = build_model(cfg);
    EXPECT_FALSE(at::equal(at::randn({8}), drawn)) << "a normal build drew nothing: " << what;
    const auto a = module_state(*initialised), b = module_state(*unset);
    ASSERT_EQ(a.size(), b.size()) << what;
    for (const auto& [name, t] : a) {
      ASSERT_TRUE(b.count(name)) << name << " " << what;
      EXPECT_EQ(t.sizes(), b.at(name).sizes()) << name;
      EXPECT_EQ(t.scalar_type(), b.at(name).scalar_type()) << name;
    }
  }
}

// A tensor of another type than the model's (I32 where the model has F32) is refused by name, not
// converted; so is one holding NaN.
TEST(Checkpoint, OtherTypesAndNaNAreRefusedByName) {
  auto model = build_model(tiny_config(Tie::none, Estimator::dot));
  auto state = module_state(*model);
  auto as_int = state;
  as_int.at("decoder0.ffn.w1") = as_int.at("decoder0.ffn.w1").to(at::kInt);
  try {
    load_module_state(*model, as_int, "f.safetensors");
    ADD_FAILURE() << "an Int tensor was converted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f.safetensors: tensor 'decoder0.ffn.w1' is Int in the file but Float in the model"),
              std::string::npos) << e.what();
  }
  auto with_nan = state;
  with_nan.at("encoder0.ffn.b1") = at::full_like(with_nan.at("encoder0.ffn.b1"), std::nan(""));
  try {
    load_module_state(*model, with_nan, "g.ykp");
    ADD_FAILURE() << "NaN weights were loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("g.ykp: tensor 'encoder0.ffn.b1' holds NaN"), std::string::npos) << e.what();
  }
}

// Every tie × output combination trains: loss on a fixed copy task goes down, by at least a tenth
// in 30 updates (the slowest, square, falls by about 30% on every kernel family; a broken
// gradient leaves it where it was).
class TieOutputTrains : public ::testing::TestWithParam<std::tuple<Tie, Estimator>> {};

TEST_P(TieOutputTrains, LossGoesDown) {
  auto [tie, output] = GetParam();
  at::manual_seed(13);
  auto cfg = tiny_config(tie, output);
  cfg.factored_rank = 0;
  auto model = build_model(cfg);
  const auto [first, last] = train_copy_task(*model);
  EXPECT_TRUE(std::isfinite(last));
  YOKE_EXPECT_AT_LEAST(1.0 - last / first, 0.1) << name_of(tie) << " × " << name_of(output);
}

INSTANTIATE_TEST_SUITE_P(AllCombinations, TieOutputTrains,
                         ::testing::Combine(::testing::Values(Tie::none, Tie::decoder, Tie::all, Tie::src_tgt),
                                            ::testing::Values(Estimator::dot, Estimator::l2, Estimator::square,
                                                              Estimator::distance, Estimator::cosine)),
                         [](const auto& info) {
                           std::string n = std::string(name_of(std::get<0>(info.param))) + "_" + name_of(std::get<1>(info.param));
                           for (auto& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });
