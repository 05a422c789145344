// `yoke export` and `yoke import`: a model directory to safetensors with its config and
// vocabularies, and back (store/model_export.h; docs/export.md has the layout).
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "store/model_export.h"
#include "store/ctranslate2_export.h"
#include "store/hf_export.h"
#include "store/hf_import.h"
#include "store/onnx_export.h"

namespace fs = std::filesystem;

namespace yoke::cli {

namespace {
void report(const char* verb, const ExportResult& r) {
  std::cerr << verb << " " << r.tensors << " tensors (" << r.values << " values): " << r.from << " -> " << r.to;
  if (!r.files.empty()) std::cerr << " (+ ";
  for (size_t i = 0; i < r.files.size(); ++i) std::cerr << (i ? ", " : "") << r.files[i];
  std::cerr << (r.files.empty() ? "" : ")") << std::endl;
  if (r.replaced) std::cerr << "replaced what " << fs::path(r.to).parent_path().string() << " held before (--force)" << std::endl;
}
}  // namespace

int cmd_export(int argc, char** argv) {
  Command cmd("export",
              "Writes a trained model for other toolkits: model.safetensors (every parameter once, named as\n"
              "in docs/export.md; the config, the tying of the word matrices and the vocabularies' checksums\n"
              "in its metadata), config.json and the SentencePiece models. python/yoke_torch.py loads it into\n"
              "plain PyTorch; `yoke import`, translate, score-pairs and serve read it back. int8 models are\n"
              "refused: export the fp32 model they were made from.\n"
              "--format onnx writes encoder.onnx and decoder.onnx (one step with its cache), onnx.json (the\n"
              "decoding settings) and the vocabularies, for ONNX Runtime (js/, web/); it runs\n"
              "python/yoke_onnx.py with Debian's python3-torch, python3-onnx and python3-sentencepiece.\n"
              "--format hf writes a Hugging Face model directory (Marian for norm = post, Blenderbot for\n"
              "norm = pre): config.json, model.safetensors, tokenizer.json and the ONNX graphs transformers.js\n"
              "loads (pipeline('translation', DIR)); it runs python/yoke_hf.py with the same packages. Every\n"
              "tie, estimator and vocabulary layout of a translation Transformer exports (separate tables\n"
              "as two blocks of one, docs/export.md); language models and the convolutions are refused.\n"
              "--format ctranslate2 writes a CTranslate2 model directory (model.bin, config.json, the\n"
              "vocabularies) from C++, no Python needed: translation and language models of arch\n"
              "transformer, every tie, estimator and norm (the estimator folded into the output layer);\n"
              "CTranslate2 quantizes it itself (compute_type=\"int8\"). python/yoke_ct2.py translates with it.\n\n"
              "example: yoke export --model runs/multi30k-ende --out export/multi30k-ende\n"
              "         yoke export --model runs/multi30k-ende --out export/multi30k-ende-onnx --format onnx\n"
              "         yoke export --model runs/multi30k-ende --out export/multi30k-ende-hf --format hf\n"
              "         yoke export --model runs/multi30k-ende --out export/multi30k-ende-ct2 --format ctranslate2");
  std::string dir, out, checkpoint, format = "safetensors";
  bool force = false;
  cmd.add_option("--model", dir, "trained model directory")->type_name("DIR")->required();
  cmd.add_option("--out", out, "directory for the exported model (created; written whole or not at all)")
      ->type_name("DIR")
      ->required();
  cmd.add_flag("--force", force, "replace --out when it is not empty (everything in it)");
  cmd.add_option("--format", format, "file format of the weights")->type_name("F")->check(CLI::IsMember({"safetensors", "onnx", "hf", "ctranslate2"}))
      ->capture_default_str();
  add_checkpoint_option(cmd, checkpoint, "checkpoint file in DIR");
  if (!cmd.read(argc, argv)) return 0;
  if (format == "onnx") {
    const PythonExporter exporter = find_onnx_exporter();  // before any work: a missing package is named at once
    report("exported", export_onnx(dir, out, checkpoint, exporter, force));
  } else if (format == "hf") {
    const PythonExporter exporter = find_hf_exporter();
    report("exported", export_hf(dir, out, checkpoint, exporter, force));
  } else if (format == "ctranslate2") {
    report("exported", export_ctranslate2(dir, out, checkpoint, force));
  } else {
    report("exported", export_model(dir, out, checkpoint, force));
  }
  return 0;
}

int cmd_import(int argc, char** argv) {
  Command cmd("import",
              "Makes a model directory of an exported model (`yoke export`): checkpoint_best.ykp with the\n"
              "same parameters, bit for bit, and the vocabularies. (translate, score-pairs and serve also read\n"
              "an exported directory as it is.)\n"
              "--format hf reads a Hugging Face Marian (post-norm) or Blenderbot (pre-norm) directory in the\n"
              "opus-mt layout (config.json, model.safetensors, source.spm, target.spm, vocab.json; with\n"
              "separate_vocabs, target_vocab.json), as `yoke export --format hf` writes it: the weights under\n"
              "yoke's names, the embedding rows in SentencePiece order, the tie their equality says. What\n"
              "yoke's Transformer does not compute (an activation other than ReLU, a logits bias,\n"
              "vocabularies it cannot map) is refused by name before anything is written (docs/export.md).\n\n"
              "example: yoke import --model export/multi30k-ende --out runs/multi30k-ende-again\n"
              "         yoke import --format hf --model export/multi30k-ende-hf --out runs/multi30k-ende-hf");
  std::string from, out, format = "safetensors";
  bool force = false;
  cmd.add_option("--model", from, "exported directory, or its model.safetensors (--format hf: the directory)")
      ->type_name("PATH")
      ->required();
  cmd.add_option("--out", out, "model directory to write (created; written whole or not at all)")
      ->type_name("DIR")
      ->required();
  cmd.add_flag("--force", force, "replace --out when it is not empty (everything in it)");
  cmd.add_option("--format", format, "what --model holds: yoke's safetensors export or a Hugging Face directory")
      ->type_name("F")
      ->check(CLI::IsMember({"safetensors", "hf"}))
      ->capture_default_str();
  if (!cmd.read(argc, argv)) return 0;
  report("imported", format == "hf" ? import_hf(from, out, force) : import_model(from, out, force));
  return 0;
}

}  // namespace yoke::cli
