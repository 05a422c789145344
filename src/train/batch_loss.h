// The training objective of one batch: encode, teacher-forced decode, logits at the real target
// positions only, label-smoothed cross-entropy. Shared by the trainer, validation and benchmarks.
#pragma once
#include "model/transformer.h"
#include "train/batch.h"
#include "train/loss.h"

namespace yoke {

LossSums batch_loss(Transformer& model, const Batch& batch, double label_smoothing);

}  // namespace yoke
