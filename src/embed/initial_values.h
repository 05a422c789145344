// The random values a model's parameters start from, drawn by the constructors of embed/ and
// model/, and a way to leave them out. load_model (store/model_store.h) and `yoke import` build a
// model and at once copy weights into every parameter and buffer (load_module_state refuses a
// file that lacks one): drawing ~8M values first took 30–100 ms of a one-sentence `translate` on
// a 2-core EPYC guest, a tenth of the command; `yoke params` only counts them (a 242M-parameter
// config: 2.2–4.5 → 0.8–1.5 s, three runs each). While a SkipInitialValues lives on a thread, the
// constructors there allocate their parameters and leave them unset (store/model_store.h:
// build_unset_model).
#pragma once
#include "compat/torch.h"

namespace yoke {

class SkipInitialValues {
 public:
  SkipInitialValues();
  ~SkipInitialValues();
  SkipInitialValues(const SkipInitialValues&) = delete;
  SkipInitialValues& operator=(const SkipInitialValues&) = delete;
  static bool active();  // on the calling thread

 private:
  bool before_;
};

// U(−bound, bound); unset under SkipInitialValues. The same draws as at::empty(sizes).uniform_.
at::Tensor initial_uniform(at::IntArrayRef sizes, double bound);
// N(0, std²); unset under SkipInitialValues. The same draws as at::randn(sizes).mul_(std).
at::Tensor initial_normal(at::IntArrayRef sizes, double std);

}  // namespace yoke
