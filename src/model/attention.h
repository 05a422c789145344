// Multi-head attention with separate query and fused key/value projections, so that
// self-attention projects q,k,v in one matrix product and cross-attention can compute the
// encoder's keys/values once per sentence (decoding caches them).
//
// Keys have no bias. A key bias b adds q·b to every score of a query alike, and softmax is blind
// to a common shift: its true gradient is 0, so Adam only divided rounding noise by its own root
// and moved it by about lr a step in a direction set by the order of sums (the weights of one
// run then differed by 2e-4 between BLAS kernel families). Values keep theirs (v_bias).
#pragma once
#include "compat/torch.h"
#include "model/int8_linear.h"

namespace yoke {

// Keys and values already split into heads: [B, H, T, d_head].
struct KeyValues {
  at::Tensor k, v;
  at::Tensor qkv_weight, qkv_bias;  // self-attention's fused projection, kept for one search
  // Decoding on the CPU: k and v are the first positions of these [slots, H, room, d_head], which
  // have room for the next steps, so a step writes one position instead of copying the cache.
  at::Tensor k_room, v_room;
  // In a room: batch row b's position t is in row position_rows[b · room + t] of it (room: its
  // size(2)). A step writes position t of batch row b in row b; reordering the batch (sentences
  // leaving, beam search's parents) copies these row numbers, never keys and values, so the
  // hypotheses of a beam share the positions of their common prefix (read once from memory).
  std::vector<int64_t> position_rows;
  // Elsewhere on the CPU: batch row b reads row rows[b] of k and v (empty: row b). The encoder's
  // memory is renumbered this way when the batch is reordered.
  std::vector<int64_t> rows;

  // Keeps the batch rows `index` (rows may repeat). On the CPU nothing moves; elsewhere k and v
  // are gathered.
  void keep_rows(const at::Tensor& index);
  // k and v with row b holding batch row b (a copy when rows are renumbered or in a room).
  at::Tensor batch_k() const { return in_batch_order(k); }
  at::Tensor batch_v() const { return in_batch_order(v); }
  // Moves k and v into batch order once, so that readers of batch_k() (the alignment weights)
  // stop gathering them on every step. Only for a cache nothing writes into (the encoder's memory).
  void gather_rows();
  // Rows of the batch in a room (position_rows' rows).
  int64_t room_batch() const { return k_room.defined() ? int64_t(position_rows.size()) / k_room.size(2) : 0; }

 private:
  at::Tensor in_batch_order(const at::Tensor& t) const;
};

class MultiheadAttention : public torch::nn::Module {
 public:
  MultiheadAttention(int64_t dim, int64_t heads, double dropout);

  // Self-attention over x [B, T, d]. With `cache` (incremental decoding) x holds only the new
  // positions and their keys/values are appended to the cache.
  at::Tensor self_attend(const at::Tensor& x, const at::Tensor& mask, KeyValues* cache = nullptr);
  // Cross-attention of x [B, T, d] over precomputed memory keys/values. With `weights`, adds to it
  // the attention probabilities summed over heads [B, T, S] (word alignments; undefined: set).
  at::Tensor cross_attend(const at::Tensor& x, const KeyValues& memory, const at::Tensor& mask,
                          at::Tensor* weights = nullptr);
  KeyValues project_memory(const at::Tensor& memory) const;  // [B, S, d] → heads
  // From now on its products run with int8 weights (decoding on the CPU): weights[prefix +
  // "q_weight"], [prefix + "kv_weight"], [prefix + "out_weight"]; the biases stay fp32.
  void use_int8(const Int8Weights& weights, const std::string& prefix);
  // From now on its products run on oneDNN with fp32 weights packed once (model/fp32_matmul.h).
  void use_packed_fp32();

  at::Tensor q_weight, q_bias, kv_weight, v_bias, out_weight, out_bias;
  // The bias of the fused key/value product: zeros for the keys, then v_bias.
  at::Tensor kv_bias() const;

 private:
  at::Tensor split_heads(const at::Tensor& x) const;  // [B, T, d] → [B, H, T, dh]
  at::Tensor attend(const at::Tensor& q, const KeyValues& kv, const at::Tensor& mask);
  // Set by use_int8 or use_packed_fp32; else at::linear on the parameters.
  std::shared_ptr<const DecodingLinear> q_packed_, kv_packed_, qkv_packed_, out_packed_;
  int64_t dim_, heads_;
  double dropout_;
};

}  // namespace yoke
