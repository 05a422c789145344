// `yoke import --format hf`: a Hugging Face Marian or Blenderbot model directory (what
// `yoke export --format hf` writes, or an opus-mt model) as a yoke model directory, read from C++
// (docs/export.md, "Back from Hugging Face"). What it reads, in the opus-mt layout:
//   config.json          model_type marian (post-norm) or blenderbot (pre-norm), the sizes, the
//                        activation, scale_embedding, the special ids, the embedding sharing flags
//   model.safetensors    the weights under the architecture's names (modeling_marian.py,
//                        modeling_blenderbot.py); tied tensors transformers leaves out are taken
//                        from the one they are tied to, as transformers does when it loads them
//   source.spm, target.spm, vocab.json
//                        SentencePiece models with yoke's special ids (text/vocab.h) and the
//                        piece → row map of the embedding; rows are permuted into SentencePiece order
//   tokenizer_config.json, target_vocab.json
//                        with separate_vocabs, the target's pieces have rows of their own
//                        (target_vocab.json; the rows no target piece has must be −inf in
//                        final_logits_bias): separate vocabularies, or one with two input tables,
//                        as `yoke export --format hf` writes them (store/hf_export.h)
// and writes checkpoint_best.ykp (weights only: the config, output = dot, the tie the tensors'
// equality says) and spm.model (or spm.src.model and spm.tgt.model), so that translate, inspect and
// train --init_from read it.
// Whatever yoke's Transformer cannot compute as the architecture does is refused, naming the file
// and the key or tensor, before anything is written.
#pragma once
#include <string>

#include "store/model_export.h"

namespace yoke {

// Imports the Hugging Face model directory `hf_dir` into `out_dir`, written whole or not at all
// (util/staged_dir.h); an `out_dir` that is not empty is refused unless `replace`, and one that is,
// holds or lies in `hf_dir` always.
ExportResult import_hf(const std::string& hf_dir, const std::string& out_dir, bool replace = false);

}  // namespace yoke
