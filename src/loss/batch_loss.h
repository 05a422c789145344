// The training objective of one batch: encode, teacher-forced decode, logits at the real target
// positions only, label-smoothed cross-entropy. Shared by the trainer, validation and benchmarks.
#pragma once
#include "batch/batch.h"
#include "loss/loss.h"
#include "model/transformer.h"

namespace yoke {

LossSums batch_loss(Transformer& model, const Batch& batch, double label_smoothing);

}  // namespace yoke
