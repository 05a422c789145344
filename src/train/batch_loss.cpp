#include "train/batch_loss.h"

#include "text/vocab.h"

namespace yoke {

LossSums batch_loss(Transformer& model, const Batch& b, double label_smoothing) {
  auto enc = model.encode(b.src);
  auto hidden = model.decode(b.tgt_in, &enc);
  auto sel = select_real_positions(hidden, b.tgt_out, Vocab::pad);
  return label_smoothed_loss(model.logits(sel.hidden), sel.target, label_smoothing);
}

}  // namespace yoke
