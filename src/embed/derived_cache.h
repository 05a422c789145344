// A value computed from tensors (an assembled shared-private matrix, a logit estimator's row
// norms), kept while autograd is off and computed again as soon as any of those tensors changed.
//
// Why: a decoder reads the word matrices once or twice a step, thousands of times per batch,
// with weights that do not change; recomputing a V×d assembled matrix or V row norms every step
// made decoding measurably slower (docs/performance.md). Decoding pays these costs once per model.
//
// "Changed" is read from every tensor the value is computed from: its storage (data_ptr: a load
// into new tensors, model.to(...)), its version counter (every in-place write through it or a
// view of it: an optimizer step, load_module_state's copy_, averaging, `w.add_(1)` under
// NoGradGuard), its device, dtype, sizes and strides. A write that bypasses the version counter
// (memcpy into data_ptr(), or through a tensor made by .data()) would go unseen; yoke has none.
//
// With autograd on (training) nothing is kept: the value is computed afresh, so gradients flow
// as they would without the cache, and what an earlier no-grad pass kept is released. Inference
// tensors carry no version counter, so values made from them are never kept either. Decoding
// workers share one model: get() is safe to call from several threads.
#pragma once
#include <mutex>
#include <utility>
#include <vector>

#include "compat/torch.h"

namespace yoke {

template <class T>
class DerivedCache {
 public:
  DerivedCache() = default;
  // A copy starts with nothing kept (the mutex does not copy, and the copy's tensors may differ).
  DerivedCache(const DerivedCache&) {}
  DerivedCache& operator=(const DerivedCache&) {
    clear();
    return *this;
  }

  // make() under autograd, else the value kept from an earlier call whose inputs are unchanged,
  // else make() kept for later.
  template <class Make>
  T get(const std::vector<at::Tensor>& inputs, Make&& make) const {
    if (at::GradMode::is_enabled() || !versioned(inputs)) {
      clear();
      return make();
    }
    std::vector<Stamp> key;
    key.reserve(inputs.size());
    for (const auto& t : inputs) key.push_back(Stamp::of(t));
    std::lock_guard<std::mutex> lock(mu_);  // held while computing: concurrent workers compute once
    if (!kept_ || key != key_) {
      value_ = make();
      key_ = std::move(key);
      kept_ = true;
    }
    return value_;
  }

  void clear() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!kept_) return;
    value_ = T();
    key_.clear();
    kept_ = false;
  }

 private:
  struct Stamp {
    const void* data = nullptr;
    int64_t version = -1;
    at::Device device = at::kCPU;
    at::ScalarType dtype = at::ScalarType::Undefined;
    std::vector<int64_t> shape;  // sizes, then strides

    static Stamp of(const at::Tensor& t) {
      Stamp s;
      if (!t.defined()) return s;
      s.data = t.data_ptr();
      s.version = int64_t(t._version());
      s.device = t.device();
      s.dtype = t.scalar_type();
      s.shape = t.sizes().vec();
      s.shape.insert(s.shape.end(), t.strides().begin(), t.strides().end());
      return s;
    }
    bool operator==(const Stamp& o) const {
      return data == o.data && version == o.version && device == o.device && dtype == o.dtype && shape == o.shape;
    }
    bool operator!=(const Stamp& o) const { return !(*this == o); }
  };

  static bool versioned(const std::vector<at::Tensor>& inputs) {
    for (const auto& t : inputs)
      if (t.defined() && t.is_inference()) return false;
    return true;
  }

  mutable std::mutex mu_;
  mutable bool kept_ = false;
  mutable std::vector<Stamp> key_;
  mutable T value_;
};

}  // namespace yoke
