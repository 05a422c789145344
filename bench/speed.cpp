// yoke's side of the speed suites (bench/run.sh on a CPU, bench/gpu.sh on a GPU, each next to
// bench/reference_pytorch.py):
//   --part workload --out FILE [--size ref|base] [--batch-tokens N]
//                                writes the fixed workload both implementations read: the model's
//                                size, training batches and 1000 source sentences
//   --part matmul [--device D]   the machine's matrix-product peak (the "limit"): fp32 on a CPU,
//                                bf16 on a GPU
//   --part train [--trace FILE]  training steps: tokens/s, model GFLOP/s (bf16 autocast on a GPU);
//                                --trace writes LibTorch's operator trace of the timed steps (Chrome
//                                trace JSON, ranked by bench/summarize_torch_trace.py; the tracer
//                                slows the steps)
//   --part profile               where a training step's time goes, phase by phase (CPU)
//   --part greedy | beam         translation of the workload's sentences (beam 5)
//   --part conv                  the depthwise convolution alone (Wu et al. 2019), band against
//                                unfold, forward + backward, by length and kernel size: where
//                                depthwise_conv switches from one to the other
// --arch transformer|lightconv|dynamicconv (train, profile, greedy, beam): the same d, depth,
// heads and FFN with convolutions in place of self-attention, kernels from Wu et al.'s lists cut to
// the depth (3, 7, 15 for ref); these rows are reported as impl "yoke-<arch>", without GFLOP/s
// (training_flops counts attention).
// Sizes: ref = d 256, 3+3 layers, 4 heads, FFN 1024, joint V 8000 (the CPU reference model);
// base = Transformer base, d 512, 6+6 layers, 8 heads, FFN 2048, joint V 32000. Tie all.
// Each part prints one JSON object (with the process's peak RSS) on its last line.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>
#include <torch/csrc/autograd/profiler_legacy.h>

#include "bench/workload.h"
#include "decode/batched_decoding.h"
#include "loss/batch_loss.h"
#include "loss/fused_loss.h"
#include "model/depthwise_conv.h"
#include "train/flat_adam.h"
#include "store/model_store.h"
#include "util/thread_policy.h"

using namespace yoke;
using Clock = std::chrono::steady_clock;

namespace {

struct ModelSize {
  int64_t vocab = 8000, dim = 256, layers = 3, heads = 4, ffn = 1024;
  static ModelSize named(const std::string& name) {
    if (name == "ref") return {};
    if (name == "base") return {32000, 512, 6, 8, 2048};
    throw std::runtime_error("--size " + name + ": use ref or base");
  }
};

// All queued GPU work done (a scalar read waits for the stream); nothing on a CPU.
void sync(const at::Device& device) {
  if (device.is_cuda()) at::zeros({1}, at::TensorOptions().device(device)).item<float>();
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) / 1024.0;
}

std::string g_arch = "transformer";  // --arch
std::string g_trace;                 // --trace (train)

std::shared_ptr<Transformer> reference_model(const ModelSize& m, const at::Device& device) {
  Config cfg;
  cfg.set("arch", g_arch);
  cfg.src_vocab_size = cfg.tgt_vocab_size = int(m.vocab);
  cfg.joint_vocab = true;
  cfg.tie = Tie::all;
  cfg.d_model = int(m.dim);
  cfg.encoder_layers = cfg.decoder_layers = int(m.layers);
  cfg.heads = int(m.heads);
  cfg.ffn_dim = int(m.ffn);
  cfg.validate();
  at::manual_seed(1);
  auto model = build_model(cfg);
  model->to(device);
  if (device.is_cuda()) compat::allow_tf32();
  return model;
}

// ---- the workload file (read by bench/reference_pytorch.py: keep the two in step)

struct Workload {
  ModelSize size;
  std::vector<Batch> batches;
  std::vector<std::vector<int>> sources;
};

void put(std::ofstream& f, int64_t v) { f.write(reinterpret_cast<const char*>(&v), sizeof v); }
int64_t get(std::ifstream& f) {
  int64_t v = 0;
  f.read(reinterpret_cast<char*>(&v), sizeof v);
  if (!f) throw std::runtime_error("workload file truncated");
  return v;
}

void write_workload(const std::string& path, const ModelSize& m, int batches, int64_t tokens, int sentences) {
  Workload w;
  w.batches = bench::synthetic_batches(batches, tokens, m.vocab, 7);
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> len(8, 24), word(4, int(m.vocab) - 1);
  for (int i = 0; i < sentences; ++i) {
    w.sources.emplace_back(size_t(len(rng)));
    for (auto& t : w.sources.back()) t = word(rng);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write("YKWL", 4);
  for (int64_t v : {int64_t(2), m.vocab, m.dim, m.layers, m.heads, m.ffn, int64_t(w.batches.size()), int64_t(w.sources.size())})
    put(f, v);
  for (const auto& b : w.batches) {
    for (int64_t v : {b.src.size(0), b.src.size(1), b.tgt_in.size(1)}) put(f, v);
    for (const auto* t : {&b.src, &b.tgt_in, &b.tgt_out}) {
      const auto c = t->contiguous();
      f.write(reinterpret_cast<const char*>(c.data_ptr<int64_t>()), std::streamsize(c.numel() * 8));
    }
  }
  for (const auto& s : w.sources) {
    put(f, int64_t(s.size()));
    for (int t : s) put(f, t);
  }
  if (!f) throw std::runtime_error("cannot write " + path);
}

Workload read_workload(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4];
  f.read(magic, 4);
  if (!f || std::string(magic, 4) != "YKWL" || get(f) != 2)
    throw std::runtime_error(path + ": not a version-2 workload file (write one with --part workload)");
  Workload w;
  for (int64_t* v : {&w.size.vocab, &w.size.dim, &w.size.layers, &w.size.heads, &w.size.ffn}) *v = get(f);
  const int64_t n_batches = get(f), n_sources = get(f);
  for (int64_t i = 0; i < n_batches; ++i) {
    const int64_t rows = get(f), s = get(f), t = get(f);
    Batch b;
    const std::pair<at::Tensor*, int64_t> parts[] = {{&b.src, s}, {&b.tgt_in, t}, {&b.tgt_out, t}};
    for (auto [tensor, cols] : parts) {
      *tensor = at::empty({rows, cols}, at::kLong);
      f.read(reinterpret_cast<char*>(tensor->data_ptr<int64_t>()), std::streamsize(rows * cols * 8));
    }
    b.src_tokens = b.src.ne(0).sum().item<int64_t>();
    b.tgt_tokens = b.tgt_out.ne(0).sum().item<int64_t>();
    w.batches.push_back(std::move(b));
  }
  for (int64_t i = 0; i < n_sources; ++i) {
    w.sources.emplace_back(size_t(get(f)));
    for (auto& t : w.sources.back()) t = int(get(f));
  }
  return w;
}

// ---- the parts

// Matrix products of the training step (forward ×3 for forward + backward), padded shapes as
// computed; the output layer on the real target positions only (what yoke computes).
double training_flops(const ModelSize& m, const Batch& b) {
  const double B = double(b.src.size(0)), S = double(b.src.size(1)), T = double(b.tgt_in.size(1)), d = double(m.dim);
  const double ffn = double(m.ffn);
  const double enc = 2 * B * S * (4 * d * d + 2 * d * ffn) + 4 * B * S * S * d;
  const double dec = 2 * B * T * (4 * d * d + 2 * d * d + 2 * d * ffn) + 2 * B * S * 2 * d * d + 4 * B * T * T * d +
                     4 * B * T * S * d;
  const double out = 2 * double(b.tgt_tokens) * d * double(m.vocab);
  return 3 * (double(m.layers) * (enc + dec) + out);
}

// fp32 on a CPU (sizes a CPU reaches its best on), bf16 8192³ on a GPU.
nlohmann::json part_matmul(const at::Device& device) {
  double best = 0;
  const auto opts = at::TensorOptions().device(device).dtype(device.is_cuda() ? at::kBFloat16 : at::kFloat);
  const std::vector<int64_t> sizes = device.is_cuda() ? std::vector<int64_t>{8192} : std::vector<int64_t>{512, 1024, 2048};
  for (int64_t n : sizes) {
    auto a = at::randn({n, n}, opts), b = at::randn({n, n}, opts);
    at::mm(a, b);  // warm-up
    sync(device);
    int reps = 0;
    const auto t0 = Clock::now();
    while (seconds_since(t0) < 1.5) {
      at::mm(a, b);
      if (++reps % 10 == 0) sync(device);
    }
    sync(device);
    best = std::max(best, 2.0 * double(n * n * n) * reps / seconds_since(t0) / 1e9);
  }
  // Which OpenBLAS kernels ran (util/thread_policy.h): bench/run.sh gives the reference the same.
  return {{"part", "matmul"}, {"gflops", best}, {"dtype", device.is_cuda() ? "bf16" : "fp32"},
          {"blas_kernels", yoke::blas_kernel_name()}};
}

nlohmann::json part_train(const Workload& w, int steps, const at::Device& device) {
  auto model = reference_model(w.size, device);
  model->train();
  std::vector<at::Tensor> params;
  for (auto& p : model->parameters()) params.push_back(p);
  FlatAdam opt(params, AdamOptions{});
  // As the trainer does: batches copied to the device asynchronously, bf16 autocast on a GPU,
  // clipping without a host sync.
  auto step = [&](const Batch& host) {
    const Batch b = batch_to_device(host, device);
    opt.zero_grad();
    LossSums out;
    {
      compat::Autocast bf16(device, true);
      out = batch_loss(*model, b, 0.1);
    }
    out.loss.backward();
    opt.scale_grad(1.0 / double(out.tokens));
    opt.clip_grad_norm(1.0);
    opt.step(5e-4);
  };
  for (int i = 0; i < (device.is_cuda() ? 3 : 1); ++i) step(w.batches[0]);  // warm-up: allocator, threads, kernels
  sync(device);
  int64_t tokens = 0;
  double flops = 0;
  std::unique_ptr<torch::autograd::profiler::RecordProfile> tracer;  // writes the file when reset
  if (!g_trace.empty()) tracer = std::make_unique<torch::autograd::profiler::RecordProfile>(g_trace);
  const auto t0 = Clock::now();
  for (int i = 0; i < steps; ++i) {
    const Batch& b = w.batches[size_t(i) % w.batches.size()];
    step(b);
    tokens += b.src_tokens + b.tgt_tokens;
    flops += training_flops(w.size, b);
  }
  sync(device);
  const double s = seconds_since(t0);
  tracer.reset();
  nlohmann::json j = {{"part", "train"}, {"steps", steps}, {"tokens", tokens}, {"seconds", s},
                      {"tokens_per_s", double(tokens) / s}, {"params", opt.params().numel()}, {"device", device.str()}};
  if (g_arch == "transformer") j["gflops"] = flops / s / 1e9;
  return j;
}

// Where a training step's time goes: each phase timed on its own (the CPU runs them in order,
// so wall-clock spans are exact), averaged over the steps.
nlohmann::json part_profile(const Workload& w, int steps) {
  auto model = reference_model(w.size, at::Device(at::kCPU));
  model->train();
  std::vector<at::Tensor> params;
  for (auto& p : model->parameters()) params.push_back(p);
  FlatAdam opt(params, AdamOptions{});
  std::map<std::string, double> spent;
  double total = 0;
  for (int i = -1; i < steps; ++i) {  // step -1: warm-up, not counted
    const Batch& b = w.batches[size_t(std::max(i, 0)) % w.batches.size()];
    auto t = Clock::now();
    const auto t_start = t;
    auto lap = [&](const char* phase) {
      if (i >= 0) spent[phase] += seconds_since(t);
      t = Clock::now();
    };
    opt.zero_grad();
    lap("zero_grad");
    auto enc = model->encode(b.src);
    lap("encoder forward");
    auto hidden = model->decode(b.tgt_in, &enc);
    lap("decoder forward");
    auto sel = select_real_positions(hidden, b.tgt_out, 0);
    auto out = fused_output_loss(model->embeddings->logit_parts(sel.hidden), sel.target, 0.1);
    lap("output layer + loss (fused, with its gradients)");
    out.loss.backward();
    lap("backward (layers)");
    opt.scale_grad(1.0 / double(out.tokens));
    opt.step(5e-4);
    lap("optimizer (flat Adam)");
    if (i >= 0) total += seconds_since(t_start);
  }
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [k, v] : spent) phases[k] = {{"seconds_per_step", v / steps}, {"share", v / total}};
  return {{"part", "profile"}, {"steps", steps}, {"seconds_per_step", total / steps}, {"phases", phases}};
}

nlohmann::json part_decode(const Workload& w, int beam, int sentences, const at::Device& device) {
  auto model = reference_model(w.size, device);
  model->eval();
  std::vector<std::vector<int>> src(w.sources.begin(), w.sources.begin() + std::min<size_t>(size_t(sentences), w.sources.size()));
  SearchOptions so;
  so.beam = beam;
  if (device.is_cuda()) translate_ids(*model, std::vector<std::vector<int>>(src.begin(), src.begin() + 16), so, 6000);
  const auto t0 = Clock::now();
  const auto out = translate_ids(*model, src, so, device.is_cuda() ? 60000 : 6000);
  const double s = seconds_since(t0);
  int64_t tokens = 0;
  for (const auto& o : out) tokens += int64_t(o.size());
  return {{"part", beam == 1 ? "greedy" : "beam"}, {"beam", beam}, {"sentences", src.size()}, {"seconds", s},
          {"sentences_per_s", double(src.size()) / s}, {"tokens", tokens}};
}

// Band against unfold (model/depthwise_conv.h): forward + backward of one convolution over
// ~4096 tokens of width 256 in 4 heads, both kernels, by length and kernel size.
nlohmann::json part_conv() {
  nlohmann::json rows = nlohmann::json::array();
  for (bool dynamic : {false, true})
    for (int64_t k : {3, 15, 31})
      for (int64_t t : {8, 16, 32, 64, 128, 256, 512, 1024}) {
        const int64_t b = std::max<int64_t>(1, 4096 / t);
        auto x = at::randn({b, t, 256}).requires_grad_(true);
        auto w = (dynamic ? at::randn({b, t, 4, k}) : at::randn({4, k})).requires_grad_(true);
        nlohmann::json row = {{"kernel", dynamic ? "dynamic" : "light"}, {"K", k}, {"T", t}};
        for (auto method : {ConvMethod::band, ConvMethod::unfold}) {
          auto once = [&] { depthwise_conv(x, w, k / 2, method).sum().backward(); };
          once();
          int reps = 0;
          const auto t0 = Clock::now();
          while (seconds_since(t0) < 0.3 || reps < 3) { once(); ++reps; }
          row[method == ConvMethod::band ? "band_ms" : "unfold_ms"] = 1e3 * seconds_since(t0) / reps;
        }
        row["chosen"] = band_is_faster(t, k, dynamic) ? "band" : "unfold";
        rows.push_back(row);
      }
  return {{"part", "conv"}, {"rows", rows}};
}

}  // namespace

int main(int argc, char** argv) {
  yoke::use_fast_math_library_settings(argv);
  std::string part, workload, out, size = "ref", device_name = "cpu";
  int steps = 6, sentences = 1000, threads = 0, batches = 4;
  int64_t batch_tokens = 4096;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--part") part = v;
    else if (k == "--workload") workload = v;
    else if (k == "--out") out = v;
    else if (k == "--steps") steps = std::atoi(v.c_str());
    else if (k == "--sentences") sentences = std::atoi(v.c_str());
    else if (k == "--threads") threads = std::atoi(v.c_str());
    else if (k == "--size") size = v;
    else if (k == "--device") device_name = v;
    else if (k == "--batch-tokens") batch_tokens = std::atoll(v.c_str());
    else if (k == "--batches") batches = std::atoi(v.c_str());
    else if (k == "--arch") g_arch = v;
    else if (k == "--trace") g_trace = v;
    else { std::fprintf(stderr, "unknown option %s\n", k.c_str()); return 2; }
  }
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  try {
    nlohmann::json j;
    const at::Device device = compat::device_from_name(device_name);
    if (part == "workload") {
      write_workload(out, ModelSize::named(size), batches, batch_tokens, 1000);
      j = {{"part", "workload"}, {"file", out}, {"size", size}};
    } else if (part == "conv") {
      j = part_conv();
    } else if (part == "matmul") {
      j = part_matmul(device);
    } else if (part == "train" || part == "greedy" || part == "beam" || part == "profile") {
      const Workload w = read_workload(workload);
      j = part == "train"     ? part_train(w, steps, device)
          : part == "profile" ? part_profile(w, steps)
                              : part_decode(w, part == "beam" ? 5 : 1, sentences, device);
    } else {
      std::fprintf(stderr, "usage: yoke_bench_speed --part workload|matmul|train|profile|greedy|beam|conv [--workload F] [--out F]\n"
                           "       [--size ref|base] [--batch-tokens N] [--batches N] [--device cpu|cuda]\n"
                           "       [--arch transformer|lightconv|dynamicconv]\n"
                           "       [--steps N] [--sentences N] [--threads N] [--trace FILE]\n");
      return 2;
    }
    j["impl"] = g_arch == "transformer" ? "yoke" : "yoke-" + g_arch;
    j["arch"] = g_arch;
    j["threads"] = threads;
    j["peak_rss_mb"] = peak_rss_mb();
    std::printf("%s\n", j.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "yoke_bench_speed: %s\n", e.what());
    return 1;
  }
  return 0;
}
