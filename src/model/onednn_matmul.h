// What yoke's two oneDNN products share (model/int8_matmul.h, model/fp32_matmul.h): the CPU
// engine; matmul primitives made once per shape and kept for the process, each with the caller's
// scratchpad, since two decoding workers may run one primitive at once; weights packed once into
// each layout a primitive asks for; and a call on the calling thread's own stream. Only in builds
// with oneDNN beside LibTorch (YOKE_HAVE_ONEDNN; CMakeLists.txt).
#pragma once
#ifdef YOKE_HAVE_ONEDNN
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace yoke::onednn {

const dnnl::engine& cpu_engine();

struct Matmul {
  dnnl::matmul primitive;
  dnnl::memory::desc weights, scratchpad;
};

// The primitive kept under `key` (a product's name and shape), made by make() the first time:
// make() returns the primitive's description, whose attributes must ask for a user scratchpad.
std::shared_ptr<const Matmul> matmul_for(const std::string& key, const std::function<dnnl::matmul::primitive_desc()>& make);

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
