#include "model/int8_kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "compat/quantized.h"
#include "model/int8_linear.h"
#include "model/int8_matmul.h"
#include "model/kernel_timing.h"
#include "util/error.h"

namespace yoke {

namespace {

std::mutex int8_choice_mutex;
std::optional<Int8Kernel> int8_chosen;
std::string int8_reason;

// Under int8_choice_mutex: the pinned kernel (pin_int8_kernel, else YOKE_INT8_KERNEL), or none.
std::optional<Int8Kernel> pinned_locked() {
  if (int8_chosen) return int8_chosen;
  const char* v = std::getenv("YOKE_INT8_KERNEL");
  if (!v || !*v) return std::nullopt;
  const auto k = int8_kernel_from_name(v);
  if (!k) throw InputError(std::string("YOKE_INT8_KERNEL=") + v + ": bf16, int8 or fp32 expected");
  if (!int8_kernel_available(*k)) throw InputError(std::string("YOKE_INT8_KERNEL=") + v + ": not available here (this LibTorch or this processor lacks it)");
  int8_chosen = *k;
  int8_reason = name_of(*k) + " (" + (*k == Int8Kernel::int8 ? int8_route() + "; " : std::string()) + "pinned by YOKE_INT8_KERNEL)";
  return int8_chosen;
}

}  // namespace

bool int8_activations_keep_7_bits() {
  return int8_matmul_available() ? !int8_matmul_has_vnni() : compat::int8_reduce_range();
}

std::string int8_route() {
  if (int8_matmul_available())
    return "oneDNN u8×s8 on " + int8_matmul_isa() + (int8_activations_keep_7_bits() ? ", 7-bit activations: no VNNI" : "");
  return "LibTorch's quantized engine";
}

bool int8_kernel_available(Int8Kernel k) {
  switch (k) {
    case Int8Kernel::bf16: {
      // oneDNN may lack bf16 products on this processor (or under DNNL_MAX_CPU_ISA) and then
      // throws at the first call: one tiny product, once, tells.
      static const bool runs = [] {
        if (!at::hasMKLDNN()) return false;
        try {
          at::NoGradGuard no_grad;
          at::linear(at::ones({8, 64}, at::kBFloat16), at::ones({64, 64}, at::kBFloat16));  // one row would take another path
          return true;
        } catch (const std::exception&) {
          return false;
        }
      }();
      return runs;
    }
    case Int8Kernel::int8: return int8_matmul_available() || compat::use_int8_engine();
    case Int8Kernel::fp32: return true;
  }
  return false;
}

bool int8_available() { return int8_kernel_available(Int8Kernel::int8) || int8_kernel_available(Int8Kernel::bf16); }

std::string name_of(Int8Kernel k) {
  switch (k) {
    case Int8Kernel::bf16: return "bf16";
    case Int8Kernel::int8: return "int8";
    case Int8Kernel::fp32: return "fp32";
  }
  return "?";
}

std::optional<Int8Kernel> int8_kernel_from_name(const std::string& name) {
  for (auto k : {Int8Kernel::bf16, Int8Kernel::int8, Int8Kernel::fp32})
    if (name_of(k) == name) return k;
  return std::nullopt;
}

Int8Kernel pick_int8_kernel(const Int8KernelTimes& t) {
  std::optional<Int8Kernel> best;
  double best_time = INFINITY;
  for (const auto& [k, time] : {std::pair{Int8Kernel::bf16, t.bf16}, std::pair{Int8Kernel::int8, t.int8}})
    if (std::isfinite(time) && time < best_time) best = k, best_time = time;
  if (!best) return Int8Kernel::fp32;
  if (!std::isfinite(t.fp32)) return *best;
  return best_time <= kInt8MaxTimeShare * t.fp32 ? *best : Int8Kernel::fp32;
}

Int8KernelTimes measure_int8_kernels(const std::vector<const Int8Weight*>& weights) {
  at::NoGradGuard no_grad;
  // The values do not matter to the time; a fixed generator keeps the global one untouched.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(12345);
  // The model's own matrices at row counts a decoding step meets, each matrix with each,
  // and new activations at every call: LibTorch 1.13's oneDNN int8 linear compiles kernels as it
  // goes (perf: page protection changes and oneDNN's JIT bookkeeping), and a benchmark that
  // repeats one matrix and one input (yoke_bench_int8_linear) made it look several times faster
  // than fp32 on the dev machine, where decoding with it was slower than fp32.
  std::vector<std::pair<int64_t, int64_t>> shapes;
  int64_t widest = 0;
  for (const auto* w : weights) {
    shapes.emplace_back(w->values.size(0), w->values.size(1));
    widest = std::max(widest, w->values.size(1));
  }
  const auto calls = timed_calls(shapes, {4, 16, 48, 128, 256});
  // Round 0 warms up (and compiles oneDNN's kernels); then kTimedRounds rounds, the kernels taking
  // turns within each, and each kernel's best round counts: a burst of other work on the machine
  // then slows one round of one kernel, not the whole of one kernel's timing. (Timing each kernel
  // in one block once chose fp32 in one process of three on the idle dev machine, where int8 took
  // 0.3–0.5 of fp32's time in the others: that process decoded at half speed.)
  constexpr int kTimedRounds = 3;
  std::vector<at::Tensor> inputs;  // per round: rows enough for every call to start at its own offset
  for (int r = 0; r <= kTimedRounds; ++r) inputs.push_back(at::randn({256 + int64_t(calls.size()), widest}, gen));
  const Int8Kernel kernels[] = {Int8Kernel::fp32, Int8Kernel::bf16, Int8Kernel::int8};
  std::map<Int8Kernel, std::vector<Int8Linear>> maps;
  for (const auto k : kernels)
    if (int8_kernel_available(k))
      for (const auto* w : weights) maps[k].emplace_back(*w, at::Tensor(), k);
  // One round of kernel k; a round that has taken `give_up` seconds (a kernel that slow cannot be
  // chosen) stops, its time extrapolated from the calls it made.
  auto time_round = [&](Int8Kernel k, int round, double give_up) {
    auto& m = maps.at(k);
    const auto t0 = std::chrono::steady_clock::now();
    double s = 0;
    for (size_t c = 0; c < calls.size(); ++c) {
      const int64_t in = weights[calls[c].matrix]->values.size(1);
      m[calls[c].matrix](inputs[size_t(round)].narrow(0, int64_t(c), calls[c].rows).narrow(1, 0, in));
      s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s > give_up) return s * double(calls.size()) / double(c + 1);
    }
    return s;
  };
  std::map<Int8Kernel, double> best;
  for (int round = 0; round <= kTimedRounds; ++round) {
    double fp32_round = INFINITY;  // fp32 runs first and whole, and sets the round's limit
    for (const auto k : kernels) {
      if (!maps.count(k)) continue;
      // Twice what could still be chosen (in the warm-up round, which also compiles oneDNN's kernels, too).
      const double s = time_round(k, round, k == Int8Kernel::fp32 ? INFINITY : 2 * fp32_round / kInt8MaxTimeShare);
      if (k == Int8Kernel::fp32) fp32_round = s;
      if (round > 0) best[k] = best.count(k) ? std::min(best[k], s) : s;
    }
  }
  Int8KernelTimes t;
  auto time_of = [&](Int8Kernel k) { return best.count(k) ? best[k] : double(NAN); };
  t.fp32 = time_of(Int8Kernel::fp32);
  t.bf16 = time_of(Int8Kernel::bf16);
  t.int8 = time_of(Int8Kernel::int8);
  return t;
}

void pin_int8_kernel(Int8Kernel k) {
  if (!int8_kernel_available(k)) throw InputError("the int8 kernel " + name_of(k) + " is not available here (this LibTorch or this processor lacks it)");
  std::lock_guard<std::mutex> lock(int8_choice_mutex);
  int8_chosen = k;
  int8_reason = name_of(k) + " (pinned)";
}

Int8Kernel int8_kernel() {
  std::lock_guard<std::mutex> lock(int8_choice_mutex);
  if (const auto k = pinned_locked()) return *k;
  throw std::logic_error("int8_kernel(): no kernel chosen yet (choose_int8_kernel with the model's weights first)");
}

Int8Kernel choose_int8_kernel(const std::vector<const Int8Weight*>& weights) {
  std::lock_guard<std::mutex> lock(int8_choice_mutex);
  if (const auto k = pinned_locked()) return *k;
  // On one thread, LibTorch's and OpenBLAS's: decoding runs one worker per core by default, each
  // on one thread, and at two threads the shares moved (the dev machine: int8 0.5 of fp32's time
  // on one thread, 0.7–1.0 on two, so that a process measuring on two sometimes chose fp32 for
  // workers that then decoded on one thread each).
  Int8KernelTimes t;
  {
    compat::OneComputeThread one;
    t = measure_int8_kernels(weights);
  }
  int8_chosen = pick_int8_kernel(t);
  auto share = [&](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", x / t.fp32);
    return std::isfinite(x) ? std::string(buf) : std::string("absent");
  };
  int8_reason = name_of(*int8_chosen) + " (" + (*int8_chosen == Int8Kernel::int8 ? int8_route() + "; " : std::string()) + "measured: bf16 " + share(t.bf16) + ", int8 " + share(t.int8) + " of fp32's time)";
  return *int8_chosen;
}

std::string int8_kernel_reason() {
  std::lock_guard<std::mutex> lock(int8_choice_mutex);
  return int8_reason;
}

}  // namespace yoke
