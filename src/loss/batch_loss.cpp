#include "loss/batch_loss.h"

#include "loss/fused_loss.h"
#include "text/vocab.h"

namespace yoke {

LossSums batch_loss(Transformer& model, const Batch& b, double label_smoothing) {
  at::Tensor hidden;
  if (b.src.defined()) {
    auto enc = model.encode(b.src);
    hidden = model.decode(b.tgt_in, &enc);
  } else {  // a language model's batch: no source
    hidden = model.decode(b.tgt_in, nullptr);
  }
  auto sel = b.keep.defined() ? select_positions(hidden, b.tgt_out, b.keep)
                              : select_real_positions(hidden, b.tgt_out, Vocab::pad);
  return fused_output_loss(model.embeddings->logit_parts(sel.hidden), sel.target, label_smoothing);
}

}  // namespace yoke
