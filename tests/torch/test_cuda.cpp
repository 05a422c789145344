// On a GPU (a CUDA build: scripts/gpu-build.sh): the same model gives the same loss on CPU and
// GPU, every tie × output combination trains there under bf16 autocast, and the command line
// trains and translates with device = cuda. Skipped, saying so, where there is no GPU.
#include <gtest/gtest.h>

#include "batch/batch.h"
#include "cli_helpers.h"
#include "loss/batch_loss.h"
#include "text/vocab.h"
#include "tiny_model.h"
#include "store/checkpoint.h"
#include "train/flat_adam.h"
#include "store/model_store.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

#define SKIP_WITHOUT_CUDA() \
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA: this LibTorch is CPU-only or no GPU is visible"

Config small_config(Tie tie, Estimator output) {
  return tiny_config(tie, output, {/*vocab=*/40, /*d_model=*/32, /*heads=*/4, /*ffn=*/64});
}

// A copy task: target = source.
Batch copy_batch(int64_t rows, int64_t len, uint64_t seed) {
  at::manual_seed(seed);
  auto src = at::randint(4, 40, {rows, len + 1});
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t l = 2 + (i % (len - 1));
    src[i][l] = Vocab::eos;
    src[i].narrow(0, l + 1, len - l).fill_(Vocab::pad);
  }
  Batch b;
  b.src = src;
  b.tgt_out = src.clone();
  b.tgt_in = at::cat({at::full({rows, 1}, Vocab::bos, at::kLong), src.narrow(1, 0, len)}, 1);
  b.tgt_in.masked_fill_(b.tgt_in.eq(Vocab::eos), Vocab::pad);
  b.tgt_tokens = b.tgt_out.ne(Vocab::pad).sum().item<int64_t>();
  return b;
}

}  // namespace

TEST(Cuda, SameLossOnCpuAndGpu) {
  SKIP_WITHOUT_CUDA();
  at::globalContext().setFloat32MatmulPrecision("highest");  // fp32 against fp32 first
  for (Estimator output : {Estimator::dot, Estimator::l2, Estimator::cosine}) {
    at::manual_seed(5);
    auto cpu = build_model(small_config(Tie::all, output));
    auto gpu = build_model(small_config(Tie::all, output));
    load_module_state(*gpu, module_state(*cpu), "cpu model");
    gpu->to(at::Device(at::kCUDA));
    cpu->eval();
    gpu->eval();
    const Batch b = copy_batch(8, 10, 3);
    const double on_cpu = batch_loss(*cpu, b, 0.1).loss.item<double>();
    const double on_gpu = batch_loss(*gpu, batch_to_device(b, at::Device(at::kCUDA)), 0.1).loss.item<double>();
    YOKE_EXPECT_NEAR(on_gpu, on_cpu, 1e-4 * std::abs(on_cpu)) << name_of(output);
    compat::Autocast bf16(at::Device(at::kCUDA), true);
    const double mixed = batch_loss(*gpu, batch_to_device(b, at::Device(at::kCUDA)), 0.1).loss.item<double>();
    YOKE_EXPECT_NEAR(mixed, on_cpu, 2e-2 * std::abs(on_cpu)) << name_of(output) << " under bf16 autocast";
  }
}

// Wu et al. (2019)'s convolutions on the GPU: fp32 equals the CPU, bf16 autocast stays close, and
// every estimator trains there (the convolution's band and unfold methods, and the kernels'
// softmax, under autocast).
TEST(Cuda, ConvolutionsGiveTheCpuLossAndTrainUnderBf16) {
  SKIP_WITHOUT_CUDA();
  at::globalContext().setFloat32MatmulPrecision("highest");
  const at::Device cuda(at::kCUDA);
  for (const char* arch : {"lightconv", "dynamicconv"}) {
    for (Estimator output : {Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance, Estimator::cosine}) {
      Config cfg = small_config(Tie::all, output);
      cfg.set("arch", arch);
      cfg.encoder_kernels = cfg.decoder_kernels = "3,7";
      at::manual_seed(5);
      auto cpu = build_model(cfg);
      auto gpu = build_model(cfg);
      load_module_state(*gpu, module_state(*cpu), "cpu model");
      gpu->to(cuda);
      cpu->eval();
      gpu->eval();
      const Batch b = copy_batch(8, 10, 3);
      const double on_cpu = batch_loss(*cpu, b, 0.1).loss.item<double>();
      const double on_gpu = batch_loss(*gpu, batch_to_device(b, cuda), 0.1).loss.item<double>();
      YOKE_EXPECT_NEAR(on_gpu, on_cpu, 1e-4 * std::abs(on_cpu)) << arch << " " << name_of(output);
      gpu->train();
      std::vector<at::Tensor> params;
      for (auto& p : gpu->parameters()) params.push_back(p);
      FlatAdam opt(params, AdamOptions{});
      const Batch train = batch_to_device(copy_batch(32, 10, 14), cuda);
      auto loss_now = [&] {
        compat::Autocast bf16(cuda, true);
        return batch_loss(*gpu, train, 0.0);
      };
      const double first = loss_now().loss.item<double>();
      for (int step = 0; step < 40; ++step) {
        opt.zero_grad();
        auto l = loss_now();
        l.loss.backward();
        opt.scale_grad(1.0 / double(l.tokens));
        opt.clip_grad_norm(1.0);
        opt.step(3e-3);
      }
      const double last = loss_now().loss.item<double>();
      EXPECT_TRUE(std::isfinite(last)) << arch << " " << name_of(output);
      YOKE_EXPECT_AT_LEAST(1.0 - last / first, 0.2) << arch << " " << name_of(output);
    }
  }
}

class CudaTieOutput : public ::testing::TestWithParam<std::tuple<Tie, Estimator>> {};

TEST_P(CudaTieOutput, TrainsUnderBf16Autocast) {
  SKIP_WITHOUT_CUDA();
  const auto [tie, output] = GetParam();
  const at::Device cuda(at::kCUDA);
  at::manual_seed(13);
  auto model = build_model(small_config(tie, output));
  model->to(cuda);
  model->train();
  std::vector<at::Tensor> params;
  for (auto& p : model->parameters()) params.push_back(p);
  FlatAdam opt(params, AdamOptions{});
  EXPECT_TRUE(opt.params().is_cuda());
  const Batch b = batch_to_device(copy_batch(32, 10, 14), cuda);
  auto loss_now = [&] {
    compat::Autocast bf16(cuda, true);
    return batch_loss(*model, b, 0.0);
  };
  const double first = loss_now().loss.item<double>();
  for (int step = 0; step < 40; ++step) {
    opt.zero_grad();
    auto l = loss_now();
    l.loss.backward();
    opt.scale_grad(1.0 / double(l.tokens));
    opt.clip_grad_norm(1.0);
    opt.step(3e-3);
  }
  const double last = loss_now().loss.item<double>();
  EXPECT_TRUE(std::isfinite(last));
  YOKE_EXPECT_AT_LEAST(1.0 - last / first, 0.2) << name_of(tie) << " × " << name_of(output);
}

INSTANTIATE_TEST_SUITE_P(AllCombinations, CudaTieOutput,
                         ::testing::Combine(::testing::Values(Tie::none, Tie::decoder, Tie::all, Tie::src_tgt),
                                            ::testing::Values(Estimator::dot, Estimator::l2, Estimator::square,
                                                              Estimator::distance, Estimator::cosine)),
                         [](const auto& info) {
                           auto name = std::string(name_of(std::get<0>(info.param))) + "_" + name_of(std::get<1>(info.param));
                           for (auto& ch : name) if (ch == '-') ch = '_';
                           return name;
                         });

TEST(CudaCli, TrainsAndTranslatesOnTheGpu) {
  SKIP_WITHOUT_CUDA();
  const auto data = data_dir();
  const auto dir = work_dir() / "cuda-model";
  ASSERT_EQ(run({YOKE_BINARY, "train", "--data", data.string(), "--save_dir", dir.string(), "--device", "cuda",
                 "--d_model", "32", "--heads", "2", "--ffn_dim", "64", "--encoder_layers", "1", "--decoder_layers", "1",
                 "--max_tokens", "512", "--max_updates", "40", "--valid_interval", "20", "--warmup", "10", "--lr", "0.003"},
                work_dir() / "cuda-train.log"),
            0)
      << slurp(work_dir() / "cuda-train.log");
  const auto log = slurp(work_dir() / "cuda-train.log");
  EXPECT_NE(log.find("device: cuda"), std::string::npos) << log;
  const auto out = output_of({YOKE_BINARY, "translate", "--model", dir.string(), "--device", "cuda", "--input",
                              (work_dir() / "corpus" / "test.src").string(), "--beam", "3"});
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 30) << out;
}
