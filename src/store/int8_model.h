// The int8 weights of a checkpoint, as `yoke quantize` writes them (store/quantize.h) and
// load_model reads them. An int8 model directory: the vocabularies (and pairs.tsv) of the
// fp32 model it came from, and one checkpoint_best.ykp whose header says "int8". In it, every
// attention and feed-forward weight of the layers is stored as int8 with one fp32 scale per row
// (tensors "int8.NAME.values" and "int8.NAME.scales"), and so is the estimator's effective output
// matrix ("int8.output"; Transformer::quantize_int8); everything else (word matrices for the
// input lookups, norms, biases, convolution blocks) stays fp32 under "model.NAME" as in a
// trained model. load_model reads it like any model directory: the fp32 parameters get the
// dequantized weights, and on a CPU the int8 products take over (Transformer::use_int8).
#pragma once
#include <string>
#include <vector>

#include "model/int8_linear.h"
#include "store/checkpoint.h"

namespace yoke {

// True when the checkpoint was written by quantize_model; the second from its header alone.
bool is_int8_checkpoint(const Checkpoint& ckpt);
bool is_int8_meta(const nlohmann::json& meta);

// Takes the "int8." tensors out of `ckpt`, puts their dequantized fp32 values under "model.NAME"
// (the output matrix has no parameter of its own and gets none) and returns them.
// InputError naming `origin` when they are malformed.
Int8Weights take_int8_weights(Checkpoint& ckpt, const std::string& origin);

// Stores `weights` as int8 tensors ("int8.NAME.values", "int8.NAME.scales") and marks the
// checkpoint int8, with `about` (where they came from, the scheme) in its header.
void put_int8_weights(Checkpoint& ckpt, const Int8Weights& weights, const nlohmann::json& about);

}  // namespace yoke
