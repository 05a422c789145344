// `yoke quantize`: an int8 copy of a trained model for fast decoding on the CPU
// (store/int8_model.h); translate, score-pairs and serve read the directory it writes as they
// read any model directory.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "model/int8_linear.h"
#include "store/quantize.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_quantize(int argc, char** argv) {
  Command cmd("quantize",
              "Writes an int8 copy of a trained model for decoding on the CPU: the attention and\n"
              "feed-forward weights and the output matrix (with the logit estimator's row scale folded\n"
              "in) become int8 with one scale per row; embeddings, norms and biases stay fp32. The new\n"
              "directory carries the vocabularies; use it with translate, score-pairs and serve as any\n"
              "model directory (on a GPU it runs in fp32 on the dequantized weights).\n\n"
              "example: yoke quantize --model runs/multi30k-ende --out runs/multi30k-ende-int8");
  std::string dir, out, checkpoint;
  cmd.add_option("--model", dir, "trained model directory")->type_name("DIR")->required();
  cmd.add_option("--out", out, "directory for the int8 model (created; written whole or not at all)")
      ->type_name("DIR")
      ->required();
  bool force = false;
  cmd.add_flag("--force", force, "replace --out when it is not empty (everything in it)");
  add_checkpoint_option(cmd, checkpoint, "checkpoint file in DIR");
  if (!cmd.read(argc, argv)) return 0;
  if (!int8_available())
    std::cerr << "note: this LibTorch has no quantized engine; the int8 model will decode in fp32 here\n";
  const auto r = quantize_model(dir, out, checkpoint, force);
  if (r.replaced) std::cerr << "replaced " << out << " (--force)\n";
  std::cerr << "quantized " << r.int8_weights << " weight matrices (" << r.int8_values << " values) to int8, kept "
            << r.fp32_values << " values fp32; " << r.from << " -> " << r.to << " (+ ";
  for (size_t i = 0; i < r.files.size(); ++i) std::cerr << (i ? ", " : "") << r.files[i];
  std::cerr << ")" << std::endl;
  return 0;
}

}  // namespace yoke::cli
