// `yoke quantize`: an fp32 model directory → an int8 one (store/int8_model.h says what it holds).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

struct QuantizeResult {
  std::string from, to;              // the checkpoints read and written
  std::vector<std::string> files;    // vocabulary and pair files copied
  int64_t int8_weights = 0, fp32_values = 0, int8_values = 0;
  bool replaced = false;             // `out` held a folder that --force replaced
};

// Quantizes the model in `dir` (checkpoint `checkpoint_name`, or best, or last) into `out`
// (created). InputError naming the file when `dir` is not
// a model directory or is already int8.
// `out` is written whole or not at all; one that is not empty is refused unless `replace`.
QuantizeResult quantize_model(const std::string& dir, const std::string& out, const std::string& checkpoint_name = "",
                              bool replace = false);

}  // namespace yoke
