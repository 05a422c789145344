#include "model/transformer.h"

#include <cmath>
#include <limits>

#include "config/config.h"
#include "embed/initial_values.h"
#include "model/fp32_matmul.h"

namespace yoke {

ModelSpec ModelSpec::from_config(const Config& c) {
  ModelSpec s;
  s.layer.dim = c.d_model;
  s.layer.heads = c.heads;
  s.layer.ffn_dim = c.ffn_dim;
  s.layer.dropout = c.dropout;
  s.layer.attention_dropout = c.attention_dropout;
  s.layer.activation_dropout = c.activation_dropout;
  s.layer.pre_norm = c.norm == Norm::pre;
  s.language_model = c.task == Task::lm;
  s.encoder_layers = s.language_model ? 0 : c.encoder_layers;
  s.decoder_layers = c.decoder_layers;
  s.max_positions = c.max_positions;
  s.learned_positions = c.positions == Positions::learned;
  s.cross_layer = c.cross_layer;
  s.direct_bridge = c.bridging == Bridging::direct;
  // The architecture's seam: what takes self-attention's place in each layer (nothing for the
  // Transformer). A new architecture is a new case here and its block in model/.
  switch (c.arch) {
    case Arch::transformer:
      break;
    case Arch::lightconv:
    case Arch::dynamicconv: {
    ConvBlockSpec conv;
    conv.kernel.dim = c.d_model;
    conv.kernel.heads = c.heads;
    conv.kernel.dynamic = c.arch == Arch::dynamicconv;
    conv.kernel.weight_softmax = c.conv_weight_softmax;
    conv.kernel.weight_dropout = c.conv_weight_dropout;
    conv.glu = c.conv_glu;
    s.conv = conv;
    for (int k : c.encoder_kernel_sizes()) s.encoder_kernels.push_back(k);
    for (int k : c.decoder_kernel_sizes()) s.decoder_kernels.push_back(k);
    break;
    }
  }
  return s;
}

void DecoderState::select(const at::Tensor& index, bool same_sentences) {
  // Convolution layers have no keys/values, attention layers no input buffer.
  for (auto& kv : self) kv.keep_rows(index);
  for (auto& b : conv) if (b.defined()) b = b.index_select(0, index);
  if (same_sentences) return;  // each row's source, hence its memory, is the one it had
  for (auto& kv : cross) {
    kv.keep_rows(index);
    // The alignment weights read the memory in batch order: gathered here, once per reordering,
    // rather than by every layer at every step.
    if (keep_attention) kv.gather_rows();
  }
  if (memory_mask.defined()) memory_mask = memory_mask.index_select(0, index);
}

Transformer::Transformer(const ModelSpec& m, const EmbeddingSpec& e) : spec_(m) {
  embeddings = register_module("embeddings", std::make_shared<WordEmbeddings>(e));
  // The convolution of layer i of a stack, with its own kernel size (none for the Transformer).
  auto conv_of = [&](const std::vector<int64_t>& kernels, int64_t i) -> std::optional<ConvBlockSpec> {
    if (!m.conv) return std::nullopt;
    TORCH_CHECK(i < int64_t(kernels.size()), "ModelSpec: no kernel size for convolution layer ", i);
    auto c = *m.conv;
    c.kernel.kernel_size = kernels[size_t(i)];
    return c;
  };
  for (int64_t i = 0; i < m.encoder_layers; ++i) {
    if (m.cross_layer && i > 0) { encoder_.push_back(encoder_.front()); continue; }
    encoder_.push_back(register_module("encoder" + std::to_string(i),
                                       std::make_shared<EncoderLayer>(m.layer, conv_of(m.encoder_kernels, i))));
  }
  for (int64_t i = 0; i < m.decoder_layers; ++i) {
    if (m.cross_layer && i > 0) { decoder_.push_back(decoder_.front()); continue; }
    decoder_.push_back(register_module("decoder" + std::to_string(i),
                                       std::make_shared<DecoderLayer>(m.layer, !m.language_model,
                                                                      conv_of(m.decoder_kernels, i))));
  }
  if (m.layer.pre_norm) {
    if (m.encoder_layers > 0) encoder_norm_ = register_module("encoder_norm", std::make_shared<LayerNorm>(m.layer.dim));
    decoder_norm_ = register_module("decoder_norm", std::make_shared<LayerNorm>(m.layer.dim));
  }
  if (m.learned_positions)
    positions_ = register_parameter("positions", initial_normal({m.max_positions, m.layer.dim}, 0.02));
  else
    positions_ = register_buffer("positions", sinusoidal_positions(m.max_positions, m.layer.dim));
  // Last, so that the other parameters draw the same initial values with or without it.
  if (m.direct_bridge) bridge = register_module("bridge", std::make_shared<DirectBridge>(m.layer.dim));
}

// The layer weights quantize_int8 covers: attention and feed-forward products, not the
// convolution blocks (self_conv) nor the word matrices.
static bool int8_layer_weight(const std::string& name) {
  if (name.rfind("embeddings.", 0) == 0 || name.find("self_conv.") != std::string::npos) return false;
  for (const char* end : {".q_weight", ".kv_weight", ".out_weight", ".ffn.w1", ".ffn.w2"}) {
    const std::string e = end;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

Int8Weights Transformer::quantize_int8() const {
  at::NoGradGuard no_grad;
  Int8Weights out;
  for (const auto& p : named_parameters(true))
    if (int8_layer_weight(p.key())) out[p.key()] = Int8Weight::quantize(p.value());
  out["output"] = Int8Weight::quantize(embeddings->affine_logits().matrix);
  return out;
}

void Transformer::use_int8(const Int8Weights& weights) {
  at::NoGradGuard no_grad;
  // Under cross_layer the stack repeats its first layer, registered once as "encoder0".
  for (size_t i = 0; i < encoder_.size(); ++i)
    if (i == 0 || encoder_[i] != encoder_[0]) encoder_[i]->use_int8(weights, "encoder" + std::to_string(i) + ".");
  for (size_t i = 0; i < decoder_.size(); ++i)
    if (i == 0 || decoder_[i] != decoder_[0]) decoder_[i]->use_int8(weights, "decoder" + std::to_string(i) + ".");
  output_packed_ = int8_linear(weights, "output", embeddings->affine_logits().bias);
  int8_ = true;
}

std::vector<at::Tensor> Transformer::decoding_matrices() const {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> out;
  for (const auto& p : named_parameters(true))
    if (int8_layer_weight(p.key())) out.push_back(p.value().detach());
  out.push_back(embeddings->affine_logits().matrix);
  return out;
}

void Transformer::use_packed_fp32() {
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < encoder_.size(); ++i)
    if (i == 0 || encoder_[i] != encoder_[0]) encoder_[i]->use_packed_fp32();
  for (size_t i = 0; i < decoder_.size(); ++i)
    if (i == 0 || decoder_[i] != decoder_[0]) decoder_[i]->use_packed_fp32();
  const auto affine = embeddings->affine_logits();
  output_packed_ = std::make_shared<const Fp32Matmul>(affine.matrix, affine.bias);
  int8_ = false;
}

at::Tensor padding_mask(const at::Tensor& ids, int64_t pad_id) {
  auto mask = at::zeros(ids.sizes(), ids.options().dtype(at::kFloat));
  mask.masked_fill_(ids.eq(pad_id), -std::numeric_limits<float>::infinity());
  return mask.view({ids.size(0), 1, 1, ids.size(1)});
}

at::Tensor causal_mask(int64_t length, const at::TensorOptions& opts) {
  return at::full({length, length}, -std::numeric_limits<float>::infinity(), opts.dtype(at::kFloat)).triu_(1);
}

at::Tensor Transformer::add_positions(const at::Tensor& x, int64_t offset) {
  const int64_t len = x.size(1);
  TORCH_CHECK(offset + len <= spec_.max_positions, "sequence of ", offset + len,
              " tokens is longer than max_positions = ", spec_.max_positions);
  return x + positions_.narrow(0, offset, len).unsqueeze(0);
}

at::Tensor Transformer::input_dropout(const at::Tensor& x) {
  return yoke::dropout(x, spec_.layer.dropout, is_training());
}

at::Tensor Transformer::final_decoder_norm(const at::Tensor& x) { return decoder_norm_ ? (*decoder_norm_)(x) : x; }

EncoderOutput Transformer::encode(const at::Tensor& src) {
  EncoderOutput out;
  out.mask = padding_mask(src, embeddings->spec().pad_id);
  auto x = input_dropout(add_positions(embeddings->embed_source(src), 0));
  for (auto& layer : encoder_) x = layer->forward(x, out.mask);
  out.memory = encoder_norm_ ? (*encoder_norm_)(x) : x;
  return out;
}

at::Tensor Transformer::decode(const at::Tensor& tgt_in, const EncoderOutput* enc, at::Tensor* cross_attention) {
  auto x = input_dropout(add_positions(embeddings->embed_target(tgt_in), 0));
  // Padding sits only at the end of a row, so a causal mask alone keeps real positions clean.
  auto self_mask = causal_mask(tgt_in.size(1), x.options());
  for (auto& layer : decoder_) {
    KeyValues memory = enc && layer->has_cross() ? layer->project_memory(enc->memory) : KeyValues{};
    x = layer->forward(x, self_mask, memory, enc ? enc->mask : at::Tensor(), nullptr, nullptr,
                       enc ? cross_attention : nullptr);
  }
  return final_decoder_norm(x);
}

DecoderState Transformer::start(const EncoderOutput* enc) {
  DecoderState s;
  s.self.resize(decoder_.size());
  s.conv.resize(decoder_.size());
  if (enc) {
    for (auto& layer : decoder_) s.cross.push_back(layer->project_memory(enc->memory));
    s.memory_mask = enc->mask;
  } else {
    s.cross.resize(decoder_.size());
  }
  return s;
}

at::Tensor Transformer::step(const at::Tensor& tokens, DecoderState& s) {
  auto x = add_positions(embeddings->embed_target(tokens.view({-1, 1})), s.position);
  at::Tensor summed;  // cross-attention summed over layers and heads
  for (size_t i = 0; i < decoder_.size(); ++i)
    x = decoder_[i]->forward(x, at::Tensor(), s.cross[i], s.memory_mask, &s.self[i], &s.conv[i],
                             s.keep_attention ? &summed : nullptr);
  if (s.keep_attention && summed.defined())
    s.attention = summed.squeeze(1).div_(double(decoder_.size() * size_t(spec_.layer.heads)));
  ++s.position;
  return final_decoder_norm(x).squeeze(1);
}

}  // namespace yoke
