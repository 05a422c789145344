// The Transformer: encoder-decoder for translation, or decoder-only for language modelling
// (encoder_layers = 0 and no cross-attention). With arch = lightconv | dynamicconv its
// self-attention sublayers are Wu et al. 2019's convolution blocks (model/conv_block.h), with
// the kernel size of each layer from ModelSpec; everything else is the same model. Word representations come from WordEmbeddings,
// so every sharing scheme and logit estimator applies to both.
#pragma once
#include <optional>
#include <vector>

#include "embed/sharing.h"
#include "model/direct_bridge.h"
#include "model/layers.h"

namespace yoke {

struct Config;

struct ModelSpec {
  LayerSpec layer;
  int64_t encoder_layers = 3, decoder_layers = 3;
  int64_t max_positions = 1024;
  bool learned_positions = false;
  bool cross_layer = false;    // one set of layer weights reused by every layer of a stack
  bool language_model = false;
  bool direct_bridge = false;  // bridging = direct: the model holds W (model/direct_bridge.h)
  // Convolutions in place of self-attention (Wu et al. 2019): set when conv is.
  std::optional<ConvBlockSpec> conv;                    // the kernel size in it is unused
  std::vector<int64_t> encoder_kernels, decoder_kernels;  // one per layer
  static ModelSpec from_config(const Config&);
};

struct EncoderOutput {
  at::Tensor memory;  // [B, S, d]
  at::Tensor mask;    // additive key mask [B, 1, 1, S]: 0 for tokens, -inf for padding
};

// What incremental decoding keeps between steps.
struct DecoderState {
  std::vector<KeyValues> self, cross;
  std::vector<at::Tensor> conv;  // convolution layers: the last K − 1 inputs [N, K − 1, d]
  at::Tensor memory_mask;
  int64_t position = 0;
  // When set, each step leaves its cross-attention in `attention` [N, S]: the probabilities
  // averaged over layers and heads (word alignments).
  bool keep_attention = false;
  at::Tensor attention;
  // Keeps the rows `index` (beam reordering, dropping finished sentences). `same_sentences`: every
  // new row descends from a row of the sentence that held its place (a beam step in which no
  // sentence left), so the cross-attention memory, the same for all rows of a sentence, stays.
  void select(const at::Tensor& index, bool same_sentences = false);
};

class Transformer : public torch::nn::Module {
 public:
  Transformer(const ModelSpec& model, const EmbeddingSpec& embeddings);

  EncoderOutput encode(const at::Tensor& src);  // src [B, S] ids
  // Teacher-forced decoder: final hidden states [B, T, d] for inputs tgt_in [B, T]. With
  // `cross_attention`, sets it to the cross-attention probabilities summed over layers and heads
  // [B, T, S], without gradient (alignments; direct bridging).
  at::Tensor decode(const at::Tensor& tgt_in, const EncoderOutput* enc, at::Tensor* cross_attention = nullptr);
  // Incremental decoding: one token per row, returns hidden [N, d].
  DecoderState start(const EncoderOutput* enc);
  at::Tensor step(const at::Tensor& tokens, DecoderState& state);
  at::Tensor logits(const at::Tensor& h) const { return output_packed_ ? (*output_packed_)(h) : embeddings->logits(h); }

  // int8 decoding on the CPU (model/int8_linear.h). quantize_int8 quantizes, one scale per row,
  // every attention and feed-forward weight of the layers (by parameter name) and, as "output",
  // the effective output matrix of the estimator (WordEmbeddings::affine_logits); embeddings,
  // norms, biases and convolution blocks stay fp32. use_int8 makes those products int8 from
  // then on; the fp32 parameters are left as they are.
  Int8Weights quantize_int8() const;
  void use_int8(const Int8Weights& weights);
  bool uses_int8() const { return int8_; }
  // fp32 decoding on the CPU with the same products on oneDNN, weights packed once
  // (model/fp32_matmul.h; model/fp32_kernel.h says when it is faster). The parameters must not
  // change afterwards: the packed copies would not follow.
  void use_packed_fp32();
  // The matrices those products multiply (the layers' and the effective output matrix), fp32
  // [N, K]: what model/fp32_kernel.h times.
  std::vector<at::Tensor> decoding_matrices() const;
  bool uses_packed_fp32() const { return output_packed_ && !int8_; }

  const ModelSpec& spec() const { return spec_; }
  std::shared_ptr<WordEmbeddings> embeddings;
  std::shared_ptr<DirectBridge> bridge;  // bridging = direct only; training uses it, decoding does not

 private:
  at::Tensor add_positions(const at::Tensor& x, int64_t offset);
  at::Tensor input_dropout(const at::Tensor& x);
  at::Tensor final_decoder_norm(const at::Tensor& x);

  ModelSpec spec_;
  std::vector<std::shared_ptr<EncoderLayer>> encoder_;  // the same object repeated under cross_layer
  std::vector<std::shared_ptr<DecoderLayer>> decoder_;
  std::shared_ptr<LayerNorm> encoder_norm_, decoder_norm_;  // pre-norm only
  at::Tensor positions_;  // sinusoidal buffer or learned parameter
  std::shared_ptr<const DecodingLinear> output_packed_;  // set by use_int8 or use_packed_fp32
  bool int8_ = false;
};

// Additive masks.
at::Tensor padding_mask(const at::Tensor& ids, int64_t pad_id);  // [B, 1, 1, S]
at::Tensor causal_mask(int64_t length, const at::TensorOptions& opts);  // [T, T]

}  // namespace yoke
