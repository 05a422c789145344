// An int8 model directory, written by `yoke quantize`: the vocabularies (and pairs.tsv) of the
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
#include "train/checkpoint.h"

namespace yoke {

// True when the checkpoint was written by quantize_model.
bool is_int8_checkpoint(const Checkpoint& ckpt);

// Takes the "int8." tensors out of `ckpt`, puts their dequantized fp32 values under "model.NAME"
// (the output matrix has no parameter of its own and gets none) and returns them.
// InputError naming `origin` when they are malformed.
Int8Weights take_int8_weights(Checkpoint& ckpt, const std::string& origin);

struct QuantizeResult {
  std::string from, to;              // the checkpoints read and written
  std::vector<std::string> files;    // vocabulary and pair files copied
  int64_t int8_weights = 0, fp32_values = 0, int8_values = 0;
};

// Quantizes the model in `dir` (checkpoint `checkpoint_name`, or best, or last) into `out`
// (created; an existing model there is an error). InputError naming the file when `dir` is not
// a model directory or is already int8.
QuantizeResult quantize_model(const std::string& dir, const std::string& out, const std::string& checkpoint_name = "");

}  // namespace yoke
