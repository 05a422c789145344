// Attention of one query a row over cached keys and values, on the CPU: what a decoding step
// runs in every layer (and, through padded_attention, every position of an encoder at inference).
// One pass per row and head (scores, softmax, weighted sum of values) in place of LibTorch's seven
// operators and their [B, H, T, dh] temporaries: at 70 rows, 4 heads and
// 15 positions those operators' dispatch and memory traffic cost more than the arithmetic.
// Inference only (no autograd). Sums run in another order than LibTorch's, so results agree
// with compat::attention up to float rounding, not bit for bit.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace yoke {

// Where each query row's key and value of each position lie, one row of k and v per (row,
// position): rows[b · stride + t]. Beam search's hypotheses share the positions of their common
// prefix this way instead of each holding a copy (model/attention.h, KeyValues).
struct PositionRows {
  const int64_t* rows = nullptr;
  int64_t stride = 0;
};

// q [B, 1, d] (any strides, the last 1), k and v [B', H, T, d/H] (the last stride 1), mask as
// mask_fits_every_query says; all float on the CPU. Row b of q reads row kv_rows[b] of k and v
// (empty: row b, and B' = B), or with `positions` its position t from row positions->rows[b ·
// stride + t]. Returns [B, 1, d], heads side by side.
at::Tensor single_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& mask, int64_t heads, const std::vector<int64_t>& kv_rows = {},
                                  const PositionRows* positions = nullptr);

// Whether these kernels take `mask` for `rows` rows of queries over `len` keys: undefined, or an
// additive mask the same for every query and head of a row (one that expands to [rows, 1, 1, len]:
// a padding mask [B, 1, 1, T]; a causal mask only for one query, [1, 1]).
bool mask_fits_every_query(const at::Tensor& mask, int64_t rows, int64_t len);

// The same loop for every position of q [B, Tq, d] as a query (k and v [B, H, T, d/H]), under a
// mask that hides padded keys only (mask_fits_every_query): the encoder's self-attention and
// the decoder's cross-attention at inference. LibTorch 1.13 runs their products as one GEMM call
// per batch row and head (a select and a call each: 128 for 32 sentences of 4 heads), about 6% of
// int8 beam search's time (LibTorch's profiler, AMD EPYC). Each query gets single_query_attention's sums.
at::Tensor padded_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                            int64_t heads);

}  // namespace yoke
