#include "loss/batch_loss.h"

#include "loss/fused_loss.h"
#include "text/vocab.h"

namespace yoke {

namespace {

// Σ_t ‖W·x_{t*} − y_t‖² over the real target positions `keep` (flat indices into tgt_out): y_t is
// the row of the word predicted at t, x_{t*} the row of the source word the step's
// cross-attention weighs most.
at::Tensor direct_bridging_sum(const Transformer& model, const Batch& b, const at::Tensor& attention,
                               const at::Tensor& keep) {
  const auto aligned = b.src.gather(1, most_attended_source(attention));  // [B, T] source ids
  const auto src_ids = aligned.reshape({-1}).index_select(0, keep);
  const auto tgt_ids = b.tgt_out.reshape({-1}).index_select(0, keep);
  const WordEmbeddings& e = *model.embeddings;
  return model.bridge->loss_sum(e.source()->lookup(src_ids), e.target().lookup(tgt_ids));
}

}  // namespace

LossSums batch_loss(Transformer& model, const Batch& b, double label_smoothing, double bridging_weight) {
  at::Tensor hidden, attention;
  const bool bridging = model.bridge && b.src.defined();
  if (b.src.defined()) {
    auto enc = model.encode(b.src);
    hidden = model.decode(b.tgt_in, &enc, bridging ? &attention : nullptr);
  } else {  // a language model's batch: no source
    hidden = model.decode(b.tgt_in, nullptr);
  }
  const at::Tensor keep = b.keep.defined() ? b.keep : b.tgt_out.reshape({-1}).ne(Vocab::pad).nonzero().squeeze(1);
  auto sel = select_positions(hidden, b.tgt_out, keep);
  LossSums out = fused_output_loss(model.embeddings->logit_parts(sel.hidden), sel.target, label_smoothing);
  if (bridging) {
    out.bridge = direct_bridging_sum(model, b, attention, keep);
    out.loss = out.loss + bridging_weight * out.bridge;
  }
  return out;
}

}  // namespace yoke
