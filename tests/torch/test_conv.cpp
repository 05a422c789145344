// LightConv and DynamicConv (Wu et al. 2019): the convolution against a direct loop over
// positions and taps, causality, padding, incremental decoding (with beam reordering), every
// sharing scheme × estimator training, and the parameter count in closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "decode/search.h"
#include "embed/shared_private.h"
#include "loss/loss.h"
#include "model/conv_block.h"
#include "model/depthwise_conv.h"
#include "model/lightconv.h"
#include "text/vocab.h"
#include "copy_task.h"
#include "tiny_model.h"
#include "train/flat_adam.h"
#include "store/model_store.h"
#include "margin.h"

using namespace yoke;
using yoke::test::random_source;
using yoke::test::tiny_config;
using yoke::test::train_copy_task;

namespace {

// The definition, one output position and one tap at a time (differentiable, slow):
// out[b, t, c] = Σ_k kernel[h(c), k] · x[b, t − padding + k, c], x = 0 outside the sequence.
at::Tensor direct_conv(const at::Tensor& x, const at::Tensor& kernel, int64_t padding) {
  const int64_t t_len = x.size(1), c = x.size(2), h = kernel.size(-2), k_len = kernel.size(-1), r = c / h;
  // Per channel: [C, K] or [B, T, C, K].
  auto per_channel = kernel.repeat_interleave(r, kernel.dim() - 2);
  std::vector<at::Tensor> rows;
  for (int64_t t = 0; t < t_len; ++t) {
    auto acc = at::zeros_like(x.select(1, 0));
    for (int64_t k = 0; k < k_len; ++k) {
      const int64_t s = t - padding + k;
      if (s < 0 || s >= t_len) continue;
      auto w = kernel.dim() == 2 ? per_channel.select(1, k) : per_channel.select(1, t).select(2, k);
      acc = acc + x.select(1, s) * w;
    }
    rows.push_back(acc);
  }
  return at::stack(rows, 1);
}

Config conv_config(const std::string& arch, Tie tie = Tie::all, Estimator output = Estimator::dot) {
  auto cfg = tiny_config(tie, output);
  cfg.set("arch", arch);
  // Kernels longer and shorter than the test sequences, centred with odd and even sizes.
  cfg.encoder_kernels = "3,4";
  cfg.decoder_kernels = "2,9";
  cfg.validate();
  return cfg;
}

const char* kArchs[] = {"lightconv", "dynamicconv"};

}  // namespace

// Both methods, both kernels, with and without the softmax, centred and causal, for sequences
// shorter and longer than the kernel: values and gradients (input and kernel weights) equal the
// direct loop. In float64, so the only difference is summation order: 1e-10 is ~10⁶ ulps of
// sums of a few dozen O(1) terms, far above reordering noise and far below any wrong tap.
TEST(DepthwiseConv, EqualsTheDirectLoopWithGradients) {
  at::manual_seed(5);
  for (bool dynamic : {false, true})
    for (bool softmax : {true, false})
      for (int64_t k : {1, 2, 5})
        for (int64_t t : {1, 3, 11})
          for (bool causal : {false, true})
            for (auto method : {ConvMethod::band, ConvMethod::unfold}) {
              ConvKernelSpec ks;
              ks.dim = 6;
              ks.heads = 3;
              ks.kernel_size = k;
              ks.dynamic = dynamic;
              ks.weight_softmax = softmax;
              auto kernel = make_conv_kernel(ks);
              kernel->to(at::kDouble);
              const int64_t pad = causal ? k - 1 : k / 2;
              auto x = at::randn({2, t, 6}, at::kDouble).requires_grad_(true);
              auto up = at::randn({2, t, 6}, at::kDouble);
              auto run = [&](bool direct) {
                for (auto& p : kernel->parameters()) p.mutable_grad() = at::Tensor();
                x.mutable_grad() = at::Tensor();
                auto w = (*kernel)(x);
                auto y = direct ? direct_conv(x, w, pad) : depthwise_conv(x, w, pad, method);
                (y * up).sum().backward();
                return std::make_tuple(y.detach(), x.grad().clone(), kernel->parameters()[0].grad().clone());
              };
              auto [y0, gx0, gw0] = run(true);
              auto [y1, gx1, gw1] = run(false);
              const std::string what = std::string(dynamic ? "dynamic" : "light") + (softmax ? " softmax" : "") +
                                       " K=" + std::to_string(k) + " T=" + std::to_string(t) +
                                       (causal ? " causal" : " centred") +
                                       (method == ConvMethod::band ? " band" : " unfold");
              YOKE_EXPECT_CLOSE(y0, y1, 1e-10, 1e-10) << what;
              YOKE_EXPECT_CLOSE(gx0, gx1, 1e-10, 1e-10) << what;
              YOKE_EXPECT_CLOSE(gw0, gw1, 1e-10, 1e-10) << what;
            }
}

// The automatic choice by length crosses from band to unfold somewhere: both sides still agree
// with each other on a long sequence (float32: sums of K ≤ 31 terms of O(1), 1e-4 is ample).
TEST(DepthwiseConv, MethodsAgreeOnLongSequences) {
  at::manual_seed(6);
  for (int64_t k : {3, 31}) {
    auto x = at::randn({3, 500, 8});
    for (auto kernel : {at::softmax(at::randn({4, k}), -1), at::softmax(at::randn({3, 500, 4, k}), -1)}) {
      auto a = depthwise_conv(x, kernel, k / 2, ConvMethod::band);
      auto b = depthwise_conv(x, kernel, k / 2, ConvMethod::unfold);
      YOKE_EXPECT_CLOSE(a, b, 1e-4, 1e-5) << "K=" << k;
    }
  }
  EXPECT_TRUE(band_is_faster(100, 3, true));
  EXPECT_FALSE(band_is_faster(1000, 3, true));
  EXPECT_FALSE(band_is_faster(5000, 31, false));
}

// DropConnect: in training some taps of the normalised kernel are zeroed, in eval none.
TEST(DepthwiseConv, DropConnectOnlyInTraining) {
  ConvKernelSpec ks;
  ks.dim = 8;
  ks.heads = 4;
  ks.kernel_size = 7;
  ks.weight_dropout = 0.5;
  LightConv conv(ks);
  auto x = at::randn({1, 3, 8});
  conv.train();
  EXPECT_GT(conv(x).eq(0).sum().item<int64_t>(), 0);
  conv.eval();
  EXPECT_EQ(conv(x).eq(0).sum().item<int64_t>(), 0);
  YOKE_EXPECT_CLOSE(conv(x).sum(-1), at::ones({4}), 1e-5, 1e-6);  // softmax rows sum to 1
}

// Changing target inputs after position t leaves the decoder's outputs up to t unchanged.
TEST(ConvModel, DecoderIsCausal) {
  for (const char* arch : kArchs) {
    at::manual_seed(7);
    auto model = build_model(conv_config(arch));
    model->eval();
    at::NoGradGuard g;
    auto src = random_source(2, 6, 24, 8);
    auto tgt = at::randint(4, 24, {2, 9});
    auto enc = model->encode(src);
    auto full = model->decode(tgt, &enc);
    for (int64_t t = 0; t + 1 < 9; ++t) {
      auto changed = tgt.clone();
      changed.narrow(1, t + 1, 9 - t - 1).copy_(at::randint(4, 24, {2, 9 - t - 1}));
      auto out = model->decode(changed, &enc);
      // Same shapes, same code path: only the zero band entries meet the changed inputs.
      YOKE_EXPECT_CLOSE(out.narrow(1, 0, t + 1), full.narrow(1, 0, t + 1), 1e-6, 1e-7) << arch << " t=" << t;
      EXPECT_FALSE(at::allclose(out.select(1, t + 1), full.select(1, t + 1))) << arch << " t=" << t;
    }
  }
}

// Padding is zeroed before the encoder's convolutions: a sentence encodes the same alone and
// padded in a batch with a longer one (different shapes reorder BLAS sums: 1e-5 on O(1) values).
TEST(ConvModel, EncoderIgnoresPadding) {
  for (const char* arch : kArchs) {
    at::manual_seed(9);
    auto model = build_model(conv_config(arch));
    model->eval();
    at::NoGradGuard g;
    auto batch = random_source(2, 10, 24, 10);
    batch[0].fill_(Vocab::pad);
    batch[0].narrow(0, 0, 3).copy_(at::tensor(std::vector<int64_t>{5, 6, Vocab::eos}));
    batch[1].narrow(0, 0, 10).copy_(at::randint(4, 24, {10}));
    batch[1][10] = Vocab::eos;
    auto alone = model->encode(batch.narrow(0, 0, 1).narrow(1, 0, 3)).memory;
    auto padded = model->encode(batch).memory.narrow(0, 0, 1).narrow(1, 0, 3);
    YOKE_EXPECT_CLOSE(alone, padded, 1e-5, 1e-5) << arch;
  }
}

// Step-by-step decoding (K − 1 input buffers, or the Transformer's key/value cache) equals
// full-sequence decoding, pre- and post-norm; halfway the rows are reordered (with a duplicate, as a beam does), and the rest of
// the steps must equal full decoding of the reordered prefixes. 1e-4/1e-5: the two paths sum the
// taps in different orders (band product vs. elementwise) through 2 layers of O(1) activations.
TEST(ConvModel, IncrementalDecodingEqualsFullDecodingUnderBeamReordering) {
  for (const char* arch : {"transformer", "lightconv", "dynamicconv"})
    for (const char* norm : {"pre", "post"}) {
      auto cfg = conv_config(arch);
      cfg.set("norm", norm);
      at::manual_seed(11);
      auto model = build_model(cfg);
      model->eval();
      at::NoGradGuard g;
      auto src = random_source(3, 7, 24, 12);
      auto tgt = at::randint(4, 24, {3, 12});
      tgt.select(1, 0).fill_(Vocab::bos);
      auto enc = model->encode(src);
      auto full = model->decode(tgt, &enc);
      auto state = model->start(&enc);
      const int64_t half = 5;
      for (int64_t t = 0; t < half; ++t) {
        auto h = model->step(tgt.select(1, t), state);
        YOKE_EXPECT_CLOSE(h, full.select(1, t), 1e-4, 1e-5) << arch << " " << norm << " step " << t;
      }
      auto order = at::tensor(std::vector<int64_t>{2, 0, 0}, at::kLong);
      state.select(order);
      auto tgt2 = tgt.index_select(0, order);
      tgt2.narrow(1, half, 12 - half).copy_(at::randint(4, 24, {3, 12 - half}));
      EncoderOutput enc2{enc.memory.index_select(0, order), enc.mask.index_select(0, order)};
      auto full2 = model->decode(tgt2, &enc2);
      for (int64_t t = half; t < 12; ++t) {
        auto h = model->step(tgt2.select(1, t), state);
        YOKE_EXPECT_CLOSE(h, full2.select(1, t), 1e-4, 1e-5) << arch << " " << norm << " reordered step " << t;
      }
    }
}

// Greedy and beam search run on both: beam 1 equals greedy, and batching does not change output.
TEST(ConvModel, SearchWorks) {
  for (const char* arch : kArchs) {
    at::manual_seed(13);
    auto model = build_model(conv_config(arch));
    model->eval();
    auto src = random_source(5, 8, 24, 14);
    SearchOptions o;
    o.beam = 1;
    auto greedy = greedy_search(*model, src, o);
    EXPECT_EQ(greedy, beam_search(*model, src, o)) << arch;
    o.beam = 4;
    auto beam = beam_search(*model, src, o);
    ASSERT_EQ(beam.size(), 5u);
    for (int64_t i = 0; i < 5; ++i) {
      auto one = beam_search(*model, src.narrow(0, i, 1), o);
      EXPECT_EQ(one[0], beam[size_t(i)]) << arch << " sentence " << i;
    }
  }
}

// Parameters in closed form. Per layer: norms 2d each; FFN 2·d·f + f + d; attention 4d² + 3d
// (biases of q, v and the output; keys have none);
// the convolution block d·g·d + g·d (input, g = 2 with the GLU) + d² + d (output) + the kernel:
// H·K (LightConv) or d·H·K (DynamicConv, no bias). Plus the final pre-norms and the embeddings.
TEST(ConvModel, ParameterCountIsTheClosedForm) {
  for (const std::string arch : {"transformer", "lightconv", "dynamicconv"})
    for (bool glu : {true, false})
      for (bool lm : {false, true}) {
        auto cfg = tiny_config(Tie::decoder);
        cfg.set("arch", arch);
        cfg.conv_glu = glu;
        cfg.encoder_layers = 3;
        cfg.decoder_layers = 2;
        cfg.encoder_kernels = "3,5,7";
        cfg.decoder_kernels = "4,31";
        if (lm) cfg.task = Task::lm;
        cfg.validate();
        auto model = build_model(cfg);
        int64_t total = 0;
        for (const auto& p : model->parameters(true)) total += p.numel();
        const int64_t d = cfg.d_model, f = cfg.ffn_dim, h = cfg.heads, g = glu ? 2 : 1;
        auto mixing = [&](int64_t k) -> int64_t {
          if (arch == "transformer") return 4 * d * d + 3 * d;
          return d * g * d + g * d + d * d + d + (arch == "lightconv" ? h * k : d * h * k);
        };
        const int64_t ffn = 2 * d * f + f + d;
        int64_t expect = count_embeddings(model->embeddings->spec()).emb + 2 * d;  // + decoder final norm
        if (!lm) {
          expect += 2 * d;  // encoder final norm
          for (int64_t k : {3, 5, 7}) expect += mixing(k) + 2 * 2 * d + ffn;
        }
        for (int64_t k : {4, 31}) expect += mixing(k) + (lm ? 2 : 3) * 2 * d + ffn + (lm ? 0 : 4 * d * d + 3 * d);
        EXPECT_EQ(total, expect) << arch << (glu ? " glu" : "") << (lm ? " lm" : "");
      }
}

// Cross-layer sharing: one set of weights when the layers have one kernel size, an error that
// names the keys when they do not.
TEST(ConvModel, CrossLayerNeedsOneKernelSize) {
  auto cfg = conv_config("dynamicconv");
  cfg.encoder_layers = cfg.decoder_layers = 3;
  cfg.cross_layer = true;
  cfg.encoder_kernels = "3,5,7";
  cfg.decoder_kernels = "3";
  try {
    cfg.validate();
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder_kernels"), std::string::npos) << e.what();
  }
  cfg.encoder_kernels = "5";
  cfg.validate();
  auto shared = build_model(cfg);
  cfg.cross_layer = false;
  cfg.encoder_layers = cfg.decoder_layers = 1;
  auto one = build_model(cfg);
  auto count = [](const auto& m) { int64_t n = 0; for (auto& p : m->parameters()) n += p.numel(); return n; };
  EXPECT_EQ(count(shared), count(one));
  at::NoGradGuard g;
  auto src = random_source(2, 5, 24, 3);
  auto enc = shared->encode(src);
  EXPECT_TRUE(at::isfinite(shared->decode(at::randint(4, 24, {2, 4}), &enc)).all().item<bool>());
}

// Every sharing scheme × estimator trains with both convolutions (loss on a copy task goes down
// by at least a tenth, as in test_model.cpp's TieOutputTrains),
// with embed_scale, factored_rank, input_grad_scale and gradient-path tracking on as well.
class ConvTieOutputTrains : public ::testing::TestWithParam<std::tuple<std::string, Tie, Estimator>> {};

TEST_P(ConvTieOutputTrains, LossGoesDown) {
  auto [arch, tie, output] = GetParam();
  at::manual_seed(13);
  auto cfg = conv_config(arch, tie, output);
  EmbeddingSpec spec = [&] {
    if (tie != Tie::shared_private) return EmbeddingSpec::from_config(cfg);
    auto c = cfg;
    c.tie = Tie::none;
    auto s = EmbeddingSpec::from_config(c);
    s.tie = Tie::shared_private;
    auto layout = std::make_shared<SharedPrivateLayout>();
    layout->src_vocab = layout->tgt_vocab = cfg.src_vocab_size;
    layout->dim = cfg.d_model;
    layout->pairs[0] = {{4, 4}, {5, 5}, {6, 7}};
    layout->pairs[1] = {{7, 6}};
    layout->pairs[2] = {{8, 8}};
    s.shared_private = layout;
    return s;
  }();
  if (output == Estimator::square) spec.factored_rank = 8;  // the factored matrices too, on some rows
  if (output == Estimator::distance) spec.scale_by_sqrt_dim = false;
  if (output == Estimator::cosine) spec.input_grad_scale = 0.5;
  auto model = std::make_shared<Transformer>(ModelSpec::from_config(cfg), spec);
  model->embeddings->track_gradient_paths(true);
  const auto [first, last] = train_copy_task(*model);
  const auto paths = model->embeddings->take_gradient_paths();
  EXPECT_TRUE(std::isfinite(paths.share_output())) << arch;
  EXPECT_TRUE(std::isfinite(last));
  YOKE_EXPECT_AT_LEAST(1.0 - last / first, 0.1) << arch << " " << name_of(tie) << " × " << name_of(output);
}

INSTANTIATE_TEST_SUITE_P(AllCombinations, ConvTieOutputTrains,
                         ::testing::Combine(::testing::Values(std::string("lightconv"), std::string("dynamicconv")),
                                            ::testing::Values(Tie::none, Tie::decoder, Tie::all, Tie::src_tgt,
                                                              Tie::shared_private),
                                            ::testing::Values(Estimator::dot, Estimator::l2, Estimator::square,
                                                              Estimator::distance, Estimator::cosine)),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" + name_of(std::get<1>(info.param)) + "_" +
                                           name_of(std::get<2>(info.param));
                           for (auto& ch : n) if (ch == '-') ch = '_';
                           return n;
                         });
