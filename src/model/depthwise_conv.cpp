#include "model/depthwise_conv.h"

namespace yoke {
namespace {

// Kernel rows w [N, T, K] → band [N, T, T] with band[n, t, s] = w[n, t, s − t + padding] (0 off
// the taps). Padding each row with T zeros and reading the flat rows back one element shorter
// shifts row t right by t, which puts tap k of row t in column t + k; the band is then the T
// columns from `padding` on. Pad, reshape and narrow are views or one copy, and differentiable.
at::Tensor band_matrix(const at::Tensor& w, int64_t padding) {
  const int64_t n = w.size(0), t = w.size(1), k = w.size(2);
  auto skewed = at::constant_pad_nd(w, {0, t}).reshape({n, t * (k + t)}).narrow(1, 0, t * (t + k - 1));
  return skewed.view({n, t, t + k - 1}).narrow(2, padding, t);
}

at::Tensor conv_band(const at::Tensor& x, const at::Tensor& kernel, int64_t padding) {
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2);
  if (kernel.dim() == 2) {
    // One band per head, shared by the batch: H products [T, T] · [T, B·R].
    const int64_t h = kernel.size(0), r = c / h, k = kernel.size(1);
    auto band = band_matrix(kernel.unsqueeze(1).expand({h, t, k}), padding);
    auto xr = x.view({b, t, h, r}).permute({2, 1, 0, 3}).reshape({h, t, b * r});
    auto out = at::bmm(band, xr);
    return out.view({h, t, b, r}).permute({2, 1, 0, 3}).reshape({b, t, c});
  }
  // One band per sentence and head: B·H products [T, T] · [T, R].
  const int64_t h = kernel.size(2), r = c / h, k = kernel.size(3);
  auto band = band_matrix(kernel.permute({0, 2, 1, 3}).reshape({b * h, t, k}), padding);
  auto xr = x.view({b, t, h, r}).transpose(1, 2).reshape({b * h, t, r});
  return at::bmm(band, xr).view({b, h, t, r}).transpose(1, 2).reshape({b, t, c});
}

at::Tensor conv_unfold(const at::Tensor& x, const at::Tensor& kernel, int64_t padding) {
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2), k = kernel.size(-1), h = kernel.size(-2), r = c / h;
  // [B, T + K − 1, C] → the K taps of every position as a view [B, T, C, K] → [B, T, H, R, K].
  auto taps = at::constant_pad_nd(x, {0, 0, padding, k - 1 - padding}).unfold(1, k, 1).view({b, t, h, r, k});
  // One broadcast multiply over the strided view and a sum over the taps (a batched product
  // with an inner size of K would copy the view and run B·T·H tiny GEMMs).
  auto w = kernel.dim() == 2 ? kernel.view({1, 1, h, 1, k}) : kernel.unsqueeze(3);  // [., ., H, 1, K]
  return (taps * w).sum(-1).view({b, t, c});
}

}  // namespace

bool band_is_faster(int64_t length, int64_t kernel_size, bool per_position) {
  return length <= (per_position ? 48 : 128) * kernel_size;
}

at::Tensor depthwise_conv(const at::Tensor& x, const at::Tensor& kernel, int64_t padding, ConvMethod method) {
  TORCH_CHECK(x.dim() == 3 && (kernel.dim() == 2 || kernel.dim() == 4), "depthwise_conv: x [B, T, C], kernel [H, K] or [B, T, H, K]");
  const int64_t k = kernel.size(-1);
  TORCH_CHECK(padding >= 0 && padding < k, "depthwise_conv: padding ", padding, " for kernel size ", k);
  TORCH_CHECK(x.size(2) % kernel.size(-2) == 0, "depthwise_conv: heads must divide the channels");
  if (method == ConvMethod::automatic) method = band_is_faster(x.size(1), k, kernel.dim() == 4) ? ConvMethod::band : ConvMethod::unfold;
  return method == ConvMethod::band ? conv_band(x, kernel, padding) : conv_unfold(x, kernel, padding);
}

at::Tensor depthwise_conv_last(const at::Tensor& window, const at::Tensor& kernel) {
  const int64_t n = window.size(0), k = window.size(1), c = window.size(2), h = kernel.size(-2);
  // [K, H, 1] or [N, K, H, 1] against the window [N, K, H, R], summed over the taps.
  auto w = kernel.dim() == 2 ? kernel.t().unsqueeze(-1) : kernel.view({n, h, k}).transpose(1, 2).unsqueeze(-1);
  return (window.view({n, k, h, c / h}) * w).sum(1).view({n, 1, c});
}

}  // namespace yoke
