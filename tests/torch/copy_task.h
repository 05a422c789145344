// A copy task on random sentences (target = source), shared by the model and convolution tests:
// a model that learns it shows that gradients reach every part it uses.
#pragma once
#include "compat/torch.h"
#include "loss/loss.h"
#include "model/transformer.h"
#include "text/vocab.h"
#include "train/flat_adam.h"

namespace yoke::test {

// Random sentences over ids 4..V-1 (0–3 are pad/unk/bos/eos), right-padded, with eos.
inline at::Tensor random_source(int64_t n, int64_t max_len, int64_t vocab, uint64_t seed) {
  at::manual_seed(seed);
  auto lens = at::randint(2, max_len, {n});
  auto src = at::zeros({n, max_len + 1}, at::kLong);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t l = lens[i].item<int64_t>();
    src[i].narrow(0, 0, l).copy_(at::randint(4, vocab, {l}));
    src[i][l] = Vocab::eos;
  }
  return src;
}

// Random id sequences over ids 4..V-1 of 1..max_len-1 ids each, without eos (search inputs).
inline std::vector<std::vector<int>> random_sentences(int n, int max_len, int vocab, uint64_t seed) {
  at::manual_seed(seed);
  std::vector<std::vector<int>> out;
  for (int i = 0; i < n; ++i) {
    const int64_t len = at::randint(1, max_len, {1}).item<int64_t>();
    auto ids = at::randint(4, vocab, {len}, at::kLong);
    std::vector<int> s;
    for (int64_t j = 0; j < len; ++j) s.push_back(int(ids[j].item<int64_t>()));
    out.push_back(s);
  }
  return out;
}

struct CopyTaskLosses {
  double first = 0, last = 0;
};

// `steps` Adam steps (lr 3e-3) on 16 random sentences: the loss before and after.
inline CopyTaskLosses train_copy_task(Transformer& model, int steps = 30) {
  model.train();
  std::vector<at::Tensor> params;
  for (auto& p : model.parameters()) params.push_back(p);
  FlatAdam opt(params, AdamOptions{});
  auto src = random_source(16, 6, 24, 14);
  // tgt_in = bos + x, tgt_out = x + eos.
  auto tgt_out = src.clone();
  auto tgt_in = at::cat({at::full({16, 1}, Vocab::bos, at::kLong), src.narrow(1, 0, src.size(1) - 1)}, 1);
  tgt_in.masked_fill_(tgt_in.eq(Vocab::eos), Vocab::pad);
  auto loss_now = [&] {
    auto enc = model.encode(src);
    auto sel = select_real_positions(model.decode(tgt_in, &enc), tgt_out, Vocab::pad);
    return label_smoothed_loss(model.logits(sel.hidden), sel.target, 0.0);
  };
  CopyTaskLosses out;
  out.first = loss_now().loss.item<double>();
  for (int step = 1; step <= steps; ++step) {
    opt.zero_grad();
    auto l = loss_now();
    l.loss.backward();
    opt.scale_grad(1.0 / double(l.tokens));
    opt.step(3e-3);
  }
  out.last = loss_now().loss.item<double>();
  return out;
}

}  // namespace yoke::test
