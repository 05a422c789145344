// The small configurations the model tests build: joint vocabulary, no dropout.
#pragma once
#include "config/config.h"
#include "model/transformer.h"

namespace yoke::test {

struct TinySize {
  int vocab = 24, d_model = 16, heads = 2, ffn = 32;
};

inline Config tiny_config(Tie tie = Tie::all, Estimator output = Estimator::dot, TinySize size = {}) {
  Config c;
  c.src_vocab_size = c.tgt_vocab_size = size.vocab;
  c.joint_vocab = true;
  c.d_model = size.d_model;
  c.heads = size.heads;
  c.ffn_dim = size.ffn;
  c.encoder_layers = c.decoder_layers = 2;
  c.dropout = 0.0;
  c.tie = tie;
  c.output = output;
  c.max_positions = 64;
  return c;
}

// Teacher-forced log-probabilities [B, T, V] of random targets for random sources.
inline at::Tensor forced_log_probs(Transformer& model, uint64_t seed, int64_t vocab) {
  at::NoGradGuard no_grad;
  at::manual_seed(seed);
  auto src = at::randint(4, vocab, {6, 9}, at::kLong);
  auto tgt = at::randint(4, vocab, {6, 7}, at::kLong);
  auto enc = model.encode(src);
  return at::log_softmax(model.logits(model.decode(tgt, &enc)), -1);
}

// A two-layer decoder-only language model of the same small size (tie all, no dropout).
inline Config tiny_lm(int vocab) {
  Config c;
  c.task = Task::lm;
  c.tgt_vocab_size = c.src_vocab_size = vocab;
  c.joint_vocab = true;
  c.tie = Tie::all;
  c.d_model = 32;
  c.heads = 2;
  c.ffn_dim = 64;
  c.decoder_layers = 2;
  c.dropout = 0;
  c.max_positions = 64;
  return c;
}

}  // namespace yoke::test
