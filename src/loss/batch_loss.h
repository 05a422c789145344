// The training objective of one batch: encode, teacher-forced decode, logits at the real target
// positions only, label-smoothed cross-entropy, and for a model with a direct bridge
// (model/direct_bridge.h) bridging_weight times its term. Shared by the trainer, validation and
// benchmarks.
#pragma once
#include "batch/batch.h"
#include "loss/loss.h"
#include "model/transformer.h"

namespace yoke {

LossSums batch_loss(Transformer& model, const Batch& batch, double label_smoothing, double bridging_weight = 1.0);

}  // namespace yoke
