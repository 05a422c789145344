// Does a logit estimator cost anything? (Liu, Zhai & Chen 2020, §2.2, claim almost nothing.) Trains the
// reference model (d=256, 3+3 layers, 4 heads, FFN 1024, joint V=8000, tie all) with each
// estimator on the same fixed batches, in interleaved rounds so that drift in the machine's
// speed falls on every estimator alike, and reports training tokens/s and the ratio to `dot`.
// The rate is taken from the median round, so one round hit by a noisy neighbour does not
// decide it; the mean over all rounds is printed too.
// The last line of output is one JSON object with every figure.
//
//   build/yoke_bench_estimators [--rounds R] [--steps S] [--tokens N] [--threads T] [--tie all]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/workload.h"
#include "loss/batch_loss.h"
#include "train/flat_adam.h"
#include "store/model_store.h"
#include "util/thread_policy.h"

using namespace yoke;

namespace {

struct Runner {
  std::shared_ptr<Transformer> model;
  std::unique_ptr<FlatAdam> opt;
  double seconds = 0;
  int64_t tokens = 0;
  std::vector<double> round_rates;  // tokens/s of each round

  double median_rate() const {
    std::vector<double> r = round_rates;
    std::sort(r.begin(), r.end());
    const size_t n = r.size();
    return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
  }

  void step(const Batch& b) {
    opt->zero_grad();
    auto out = batch_loss(*model, b, 0.1);
    out.loss.backward();
    opt->scale_grad(1.0 / double(out.tokens));
    opt->step(5e-4);
  }
};

}  // namespace

int main(int argc, char** argv) {
  yoke::use_fast_math_library_settings(argv);
  int rounds = 5, steps = 4, threads = 0;
  int64_t tokens = 2048;
  Tie tie = Tie::all;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (k == "--steps") steps = std::atoi(argv[i + 1]);
    else if (k == "--tokens") tokens = std::atoll(argv[i + 1]);
    else if (k == "--threads") threads = std::atoi(argv[i + 1]);
    else if (k == "--tie") tie = parse_enum<Tie>("--tie", argv[i + 1]);
    else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  yoke::compat::set_compute_threads(threads);  // LibTorch's threads and OpenBLAS's

  Config cfg;
  cfg.src_vocab_size = cfg.tgt_vocab_size = 8000;
  cfg.joint_vocab = true;
  cfg.tie = tie;
  const auto batches = bench::synthetic_batches(steps, tokens, 8000, 7);
  const std::vector<std::string> estimators = names_of<Estimator>();
  std::map<std::string, Runner> runners;
  for (const std::string& e : estimators) {
    cfg.output = parse_enum<Estimator>("output", e);
    at::manual_seed(1);
    Runner r;
    r.model = build_model(cfg);
    r.model->train();
    std::vector<at::Tensor> params;
    for (auto& p : r.model->parameters()) params.push_back(p);
    r.opt = std::make_unique<FlatAdam>(params, AdamOptions{});
    r.step(batches[0]);  // warm-up: allocator and thread pool
    runners.emplace(e, std::move(r));
  }
  std::fprintf(stderr, "estimators: %d rounds × %d steps of ~%lld tokens per side, tie %s, %d threads\n", rounds, steps,
               (long long)tokens, name_of(tie), threads);
  for (int round = 0; round < rounds; ++round) {
    // Each round starts with the next estimator, so none always runs first or after the same one.
    const int count = int(estimators.size());
    for (int k = 0; k < count; ++k) {
      const std::string& e = estimators[(round + k) % count];
      auto& r = runners.at(e);
      const auto t0 = std::chrono::steady_clock::now();
      int64_t round_tokens = 0;
      for (const auto& b : batches) {
        r.step(b);
        round_tokens += b.src_tokens + b.tgt_tokens;
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      r.seconds += seconds;
      r.tokens += round_tokens;
      r.round_rates.push_back(double(round_tokens) / seconds);
    }
    std::fprintf(stderr, "  round %d/%d done\n", round + 1, rounds);
  }
  nlohmann::json out = {{"benchmark", "estimators"}, {"tie", name_of(tie)}, {"threads", threads}, {"rounds", rounds},
                        {"steps", steps}, {"tokens_per_side", tokens}};
  const double dot_rate = runners.at("dot").median_rate();
  const double dot_mean = double(runners.at("dot").tokens) / runners.at("dot").seconds;
  std::printf("%-10s %12s %10s %14s\n", "output", "tokens/s", "vs dot", "mean vs dot");
  for (const std::string& e : estimators) {
    const auto& r = runners.at(e);
    const double rate = r.median_rate(), mean = double(r.tokens) / r.seconds;
    std::printf("%-10s %12.0f %10.3f %14.3f\n", e.c_str(), rate, rate / dot_rate, mean / dot_mean);
    out["tokens_per_s"][e] = rate;
    out["ratio_to_dot"][e] = rate / dot_rate;
    out["mean_ratio_to_dot"][e] = mean / dot_mean;
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
