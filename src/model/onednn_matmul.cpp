#include "model/onednn_matmul.h"

#ifdef YOKE_HAVE_ONEDNN
#include <map>

namespace yoke::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

namespace {
std::mutex kept_mutex;
std::map<MatmulKey, std::shared_ptr<const Matmul>> kept;
}  // namespace

std::shared_ptr<const Matmul> kept_matmul(const MatmulKey& key) {
  std::lock_guard<std::mutex> lock(kept_mutex);
  const auto it = kept.find(key);
  return it == kept.end() ? nullptr : it->second;
}

std::shared_ptr<const Matmul> keep_matmul(const MatmulKey& key, const dnnl::matmul::primitive_desc& pd) {
  auto made = std::make_shared<const Matmul>(Matmul{dnnl::matmul(pd), pd.weights_desc(), pd.scratchpad_desc()});
  std::lock_guard<std::mutex> lock(kept_mutex);
  return kept.emplace(key, std::move(made)).first->second;
}

dnnl::memory PackedWeights::in_layout(const dnnl::memory::desc& want) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [desc, mem] : packed_)
    if (desc == want) return mem;
  dnnl::memory mem(want, cpu_engine());
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(plain_, mem).execute(stream, plain_, mem);
  stream.wait();
  packed_.emplace_back(want, mem);
  return mem;
}

void run(const Matmul& m, std::unordered_map<int, dnnl::memory> args) {
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < m.scratchpad.get_size()) scratch.resize(m.scratchpad.get_size());
  args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(m.scratchpad, cpu_engine(), scratch.data()));
  thread_local dnnl::stream stream(cpu_engine());  // a stream is not shared between threads
  m.primitive.execute(stream, args);
  stream.wait();
}

}  // namespace yoke::onednn
#endif
