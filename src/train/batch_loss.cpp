#include "train/batch_loss.h"

#include <algorithm>

#include "text/vocab.h"
#include "train/fused_loss.h"

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
  // Chunks of 512 rows keep a CPU's caches warm; a GPU wants few, large products (≤ 2^27 logits a chunk).
  const int64_t vocab = model.embeddings->spec().tgt_vocab;
  const int64_t rows = hidden.is_cuda() ? std::max<int64_t>(512, (int64_t(1) << 27) / std::max<int64_t>(1, vocab)) : 512;
  return fused_output_loss(model.embeddings->logit_parts(sel.hidden), sel.target, label_smoothing, rows);
}

}  // namespace yoke
