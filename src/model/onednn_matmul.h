// What yoke's two oneDNN products share (model/int8_matmul.h, model/fp32_matmul.h): the CPU
// engine; matmul primitives made once per shape and kept for the process, each with the caller's
// scratchpad, since two decoding workers may run one primitive at once; weights packed once into
// each layout a primitive asks for; and a call on the calling thread's own stream. Only in builds
// with oneDNN beside LibTorch (YOKE_HAVE_ONEDNN; CMakeLists.txt).
#pragma once
#ifdef YOKE_HAVE_ONEDNN
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace yoke::onednn {

using memory = dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

const dnnl::engine& cpu_engine();

struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory::desc weights, scratchpad;
};

// A product's kind (its source type: u8 or f32) and shape: rows, K, N, relu.
using MatmulKey = std::tuple<dt, int64_t, int64_t, int64_t, bool>;
std::shared_ptr<const Matmul> kept_matmul(const MatmulKey& key);  // null until kept
// Keeps the primitive of `pd` under `key`, unless another thread kept one first; returns the kept one.
std::shared_ptr<const Matmul> keep_matmul(const MatmulKey& key, const dnnl::matmul::primitive_desc& pd);

// The primitive kept under `key`, made from make()'s description the first time (its attributes
// must ask for a user scratchpad). Called for every product: a look-up, nothing allocated.
template <class Make>
std::shared_ptr<const Matmul> matmul_for(const MatmulKey& key, Make make) {
  if (auto m = kept_matmul(key)) return m;
  return keep_matmul(key, make());
}

// One weight matrix, packed once into each layout asked for; `plain` describes the caller's
// memory, which must outlive this.
class PackedWeights {
 public:
  explicit PackedWeights(dnnl::memory plain) : plain_(std::move(plain)) {}
  dnnl::memory in_layout(const dnnl::memory::desc& want);

 private:
  dnnl::memory plain_;
  std::mutex mutex_;
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> packed_;
};

// Runs `m` with `args` plus the calling thread's scratchpad, on the calling thread's stream, and
// waits for it.
void run(const Matmul& m, std::unordered_map<int, dnnl::memory> args);

}  // namespace yoke::onednn
#endif
