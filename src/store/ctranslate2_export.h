// `yoke export --format ctranslate2`: a model as a CTranslate2 model directory (docs/export.md,
// "CTranslate2"), written here in C++ in the layout of CTranslate2 4.x's own specs
// (python/ctranslate2/specs/transformer_spec.py, attention_spec.py, common_spec.py):
//   model.bin      store/ctranslate2_model_file.h; TransformerSpec (revision 7) for translation,
//                  TransformerDecoderSpec (revision 8) for a language model
//   config.json    the spec's config: unk/bos/eos tokens, decoder_start_token "<s>" (yoke starts
//                  from bos), add_source_eos true (yoke's sources end with eos), layer_norm_epsilon
//                  1e-5, multi_query_attention false; and "yoke": where the weights came from and the
//                  decoding settings of `yoke translate` (python/yoke_ct2.py reads them)
//   shared_vocabulary.json, or source_ and target_vocabulary.json (vocabulary.json for a language
//                  model): the SentencePiece pieces by id; and the SentencePiece models themselves
// What maps to what:
//   embeddings      the rows each input lookup reads (l2: normalized; factored or shared-private:
//                   multiplied out), with scale_embeddings saying whether the lookup is × √d
//   positions       position_encodings/encodings = yoke's table (sinusoidal or learned), from 0
//   attention       self_attention/linear_0 = [q; k; v] with bias [q_bias; 0; v_bias] (yoke's keys
//                   have no bias), linear_1 = out; attention (cross) linear_0 = q, linear_1 = [k; v],
//                   linear_2 = out; each sublayer's layer_norm is the norm yoke applies around it
//   norms           encoder/layer_norm, decoder/layer_norm: pre-norm's final norms
//   output          decoder/projection = the estimator folded into one affine map
//                   (WordEmbeddings::affine_logits): rows over ‖w‖ (l2, cosine) or ‖w‖² (square),
//                   and for distance the bias −½‖w‖²
//   cross_layer     every layer written (stored once: the repeats are aliases)
// Refused, naming the setting: arch lightconv and dynamicconv (TransformerSpec has no convolution
// blocks), int8 model directories (their weights are rounded; CTranslate2 quantizes the fp32 export
// itself with compute_type int8). bridging = direct's W is training-only and left out.
#pragma once
#include <string>

#include "store/model_export.h"

namespace yoke {

struct Config;

// InputError naming the setting when CTranslate2's Transformer specs cannot hold a model of `config`.
void check_ctranslate2_expressible(const Config& config);

// Exports the checkpoint of `model_dir` (as export_model picks it) into `out_dir`, written whole or
// not at all; an `out_dir` that is not empty is refused unless `replace`. What
// check_ctranslate2_expressible refuses is refused before anything is written.
ExportResult export_ctranslate2(const std::string& model_dir, const std::string& out_dir,
                                const std::string& checkpoint_name = "", bool replace = false);

}  // namespace yoke
