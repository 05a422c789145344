// LibTorch's quantized engines, the part of LibTorch that differs most between the two versions
// yoke builds with (kept beside compat/torch.h rather than in it, so that the int8 path does not
// add its headers to every file). Debian's 1.13 offers QNNPACK and ONEDNN (no FBGEMM); 2.x adds
// X86 (FBGEMM + oneDNN) where it was built with them. `LinearPackedParamsBase` and the
// `quantized::linear_prepack` operator have the same form in both.
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "compat/torch.h"

namespace yoke::compat {

// Sets LibTorch's current quantized engine to the best one this build has for int8 matrix
// products on the CPU; false when it has none. ONEDNN comes first: on the 2-core AVX-512
// development machine its dynamic int8 linear was 2–6× faster than QNNPACK's at decoding shapes
// (20–160 rows, d 256; docs/performance.md, "int8 decoding").
inline bool use_int8_engine() {
  const auto& supported = at::globalContext().supportedQEngines();
  auto has = [&](at::QEngine e) { return std::find(supported.begin(), supported.end(), e) != supported.end(); };
  for (auto e : {at::QEngine::ONEDNN,
#if TORCH_VERSION_MAJOR >= 2
                 at::QEngine::X86,
#endif
                 at::QEngine::FBGEMM, at::QEngine::QNNPACK}) {
    if (!has(e)) continue;
    if (at::globalContext().qEngine() != e) at::globalContext().setQEngine(e);
    return true;
  }
  return false;
}

// Whether activations are quantized to 7 bits, as PyTorch's default qconfig for the engine does:
// FBGEMM (and X86) multiply u8·s8 pairs into int16 sums that can saturate on processors without
// VNNI, so they keep one bit spare; oneDNN's default keeps all 8; QNNPACK ignores the flag.
inline bool int8_reduce_range() { return at::globalContext().qEngine() != at::QEngine::ONEDNN; }

using Int8Packed = c10::intrusive_ptr<LinearPackedParamsBase>;

// Packs a per-channel qint8 weight [N, K] and an fp32 bias [N] for the current engine.
inline Int8Packed int8_prepack(const at::Tensor& qweight, const at::Tensor& bias) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("quantized::linear_prepack", "")
                       .typed<Int8Packed(at::Tensor, c10::optional<at::Tensor>)>();
  return op.call(qweight, bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt);
}

}  // namespace yoke::compat
