#include "store/ctranslate2_export.h"

#include <filesystem>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "store/checkpoint.h"
#include "store/ctranslate2_model_file.h"
#include "store/int8_model.h"
#include "store/model_store.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/staged_dir.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

// The spec names and revisions CTranslate2 4.x loads (src/models/transformer.cc).
constexpr const char* kSeq2SeqSpec = "TransformerSpec";
constexpr uint32_t kSeq2SeqRevision = 7;
constexpr const char* kDecoderSpec = "TransformerDecoderSpec";
constexpr uint32_t kDecoderRevision = 8;
constexpr double kLayerNormEpsilon = 1e-5;  // model/layers.cpp's LayerNorm

at::Tensor int8_scalar(int64_t v) { return at::scalar_tensor(v, at::kChar); }
at::Tensor int16_scalar(int64_t v) { return at::scalar_tensor(v, at::kShort); }
at::Tensor fp32(const at::Tensor& t) { return t.detach().to(at::kCPU, at::kFloat).contiguous(); }

// The variables of one model, filled from yoke's parameters by name.
class Layout {
 public:
  Layout(const Transformer& model, const Config& c) : state_(module_state(model)), config_(c) {}

  void norm(const std::string& scope, const std::string& yoke) {
    out[scope + "/gamma"] = take(yoke + ".weight");
    out[scope + "/beta"] = take(yoke + ".bias");
  }
  void linear(const std::string& scope, const at::Tensor& weight, const at::Tensor& bias) {
    out[scope + "/weight"] = fp32(weight);
    if (bias.defined()) out[scope + "/bias"] = fp32(bias);
  }
  // [k; v]'s bias: yoke's keys have none.
  at::Tensor kv_bias(const std::string& yoke) {
    const auto v = take(yoke + ".v_bias");
    return at::cat({at::zeros_like(v), v});
  }
  void self_attention(const std::string& scope, const std::string& layer) {
    const std::string a = layer + ".self_attn";
    norm(scope + "/layer_norm", layer + ".self_attn_norm");
    linear(scope + "/linear_0", at::cat({take(a + ".q_weight"), take(a + ".kv_weight")}),
           at::cat({take(a + ".q_bias"), kv_bias(a)}));
    linear(scope + "/linear_1", take(a + ".out_weight"), take(a + ".out_bias"));
  }
  void cross_attention(const std::string& scope, const std::string& layer) {
    const std::string a = layer + ".cross_attn";
    norm(scope + "/layer_norm", layer + ".cross_attn_norm");
    linear(scope + "/linear_0", take(a + ".q_weight"), take(a + ".q_bias"));
    linear(scope + "/linear_1", take(a + ".kv_weight"), kv_bias(a));
    linear(scope + "/linear_2", take(a + ".out_weight"), take(a + ".out_bias"));
  }
  void ffn(const std::string& scope, const std::string& layer) {
    norm(scope + "/layer_norm", layer + ".ffn_norm");
    linear(scope + "/linear_0", take(layer + ".ffn.w1"), take(layer + ".ffn.b1"));
    linear(scope + "/linear_1", take(layer + ".ffn.w2"), take(layer + ".ffn.b2"));
  }
  // The attributes every stack has (TransformerEncoderSpec / TransformerDecoderSpec.__init__).
  void stack_attributes(const std::string& scope) {
    out[scope + "/num_heads"] = int16_scalar(config_.heads);
    out[scope + "/pre_norm"] = int8_scalar(config_.norm == Norm::pre);
    out[scope + "/activation"] = int8_scalar(0);  // common_spec.Activation.RELU: yoke's feed-forward
    out[scope + "/scale_embeddings"] = int8_scalar(config_.embed_scale == EmbedScale::sqrt);
    out[scope + "/position_encodings/encodings"] = take("positions");
  }
  // Under cross_layer every layer reads the first one's parameters.
  std::string layer(const char* stack, int i) const {
    return stack + std::to_string(config_.cross_layer ? 0 : i);
  }

  std::map<std::string, at::Tensor> out;

 private:
  at::Tensor take(const std::string& name) const {
    const auto it = state_.find(name);
    if (it == state_.end()) throw std::logic_error("ctranslate2 export: the model has no parameter " + name);
    return fp32(it->second);
  }
  std::map<std::string, at::Tensor> state_;
  const Config& config_;
};

void fill_decoder(Layout& l, const LoadedModel& m, bool cross_attention) {
  const Config& c = m.config;
  const WordEmbeddings& emb = *m.model->embeddings;
  l.stack_attributes("decoder");
  l.out["decoder/alignment_layer"] = int16_scalar(-1);
  l.out["decoder/alignment_heads"] = int16_scalar(1);
  l.out["decoder/alibi"] = int8_scalar(0);
  l.out["decoder/alibi_use_positive_positions"] = int8_scalar(0);
  l.out["decoder/scale_alibi"] = int8_scalar(0);
  l.out["decoder/start_from_zero_embedding"] = int8_scalar(0);
  for (int i = 0; i < c.decoder_layers; ++i) {
    const std::string scope = "decoder/layer_" + std::to_string(i), layer = l.layer("decoder", i);
    l.self_attention(scope + "/self_attention", layer);
    if (cross_attention) l.cross_attention(scope + "/attention", layer);
    l.ffn(scope + "/ffn", layer);
  }
  if (c.norm == Norm::pre) l.norm("decoder/layer_norm", "decoder_norm");
  const AffineLogits out = emb.affine_logits();
  l.linear("decoder/projection", out.matrix, out.bias);
}

// The rows a lookup of `matrix` reads, before √d. Where the output reads the same matrix with the
// same rows (dot, and l2 whose lookups are normalized too) the projection's own rows are taken, so
// that the file stores them once and CTranslate2 ties them as yoke does.
at::Tensor input_rows(const WordEmbeddings& emb, const WordMatrix& matrix) {
  const Estimator e = emb.spec().output;
  if (&matrix == &emb.output() && (e == Estimator::dot || e == Estimator::l2)) return emb.affine_logits().matrix;
  return estimator_lookup(e, matrix, at::arange(matrix.vocab(), at::kLong));
}

// The pieces by id, one per row of the matrix they name.
std::vector<std::string> pieces(const Vocab& v, int64_t rows) {
  if (v.size() != rows)
    throw input_error(v.path(), 0, "has " + std::to_string(v.size()) + " pieces for a word matrix of " +
                                       std::to_string(rows) + " rows");
  std::vector<std::string> out;
  for (int i = 0; i < v.size(); ++i) out.push_back(v.piece(i));
  return out;
}

// As model_spec.py's _save_vocabulary writes it: json.dump(tokens, indent=2), ASCII-escaped.
void write_json(const fs::path& path, const nlohmann::json& j) {
  write_file_atomically(path.string(), j.dump(2, ' ', /*ensure_ascii=*/true) + (j.is_array() ? "" : "\n"));
}

}  // namespace

void check_ctranslate2_expressible(const Config& c) {
  if (c.arch != Arch::transformer)
    throw InputError(std::string("--format ctranslate2: arch = ") + name_of(c.arch) +
                     ": CTranslate2's Transformer specs have self-attention, not Wu et al.'s convolutions "
                     "(--format onnx exports them)");
}

ExportResult export_ctranslate2(const std::string& dir, const std::string& out, const std::string& checkpoint_name,
                                bool replace) {
  ExportResult r;
  r.from = pick_checkpoint(dir, checkpoint_name);
  const nlohmann::json meta = read_model_meta(r.from);
  if (is_int8_meta(meta))
    throw input_error(r.from, 0, "is an int8 model (`yoke quantize`): its weights are rounded to int8; export the fp32 "
                                 "model it was made from, and let CTranslate2 quantize it (compute_type=\"int8\")");
  check_ctranslate2_expressible(checkpoint_config(meta, r.from));
  StagedDirectory staged(out, replace, "yoke export", {{"--model", dir}});
  const LoadedModel m = load_model(dir, checkpoint_name, "cpu", ModelUse::read_weights);
  const Config& c = m.config;
  const bool lm = c.task == Task::lm;
  at::NoGradGuard no_grad;
  const WordEmbeddings& emb = *m.model->embeddings;

  Layout l(*m.model, c);
  if (!lm) {
    l.stack_attributes("encoder");
    l.out["encoder/embeddings_merge"] = int8_scalar(0);      // common_spec.EmbeddingsMerge.CONCAT (one embedding)
    l.out["encoder/multi_query_attention"] = int8_scalar(0);
    l.out["encoder/embeddings_0/weight"] = fp32(input_rows(emb, *emb.source()));
    for (int i = 0; i < c.encoder_layers; ++i) {
      const std::string scope = "encoder/layer_" + std::to_string(i), layer = l.layer("encoder", i);
      l.self_attention(scope + "/self_attention", layer);
      l.ffn(scope + "/ffn", layer);
    }
    if (c.norm == Norm::pre) l.norm("encoder/layer_norm", "encoder_norm");
  }
  l.out["decoder/embeddings/weight"] = fp32(input_rows(emb, emb.target()));
  fill_decoder(l, m, !lm);

  CTranslate2Model file;
  file.spec = lm ? kDecoderSpec : kSeq2SeqSpec;
  file.revision = lm ? kDecoderRevision : kSeq2SeqRevision;
  file.variables = std::move(l.out);
  const fs::path to(staged.path());
  const CTranslate2Written written = write_ctranslate2_model((to / "model.bin").string(), file);
  r.tensors = written.stored;
  r.values = written.values;

  // The special tokens by yoke's fixed ids (text/vocab.h), as the target vocabulary spells them.
  nlohmann::json config = {{"unk_token", m.tgt_vocab.piece(Vocab::unk)},
                           {"bos_token", m.tgt_vocab.piece(Vocab::bos)},
                           {"eos_token", m.tgt_vocab.piece(Vocab::eos)},
                           {"layer_norm_epsilon", kLayerNormEpsilon},
                           {"multi_query_attention", false}};
  if (!lm) {
    config["decoder_start_token"] = m.tgt_vocab.piece(Vocab::bos);
    config["add_source_bos"] = false;
    config["add_source_eos"] = true;
    // CTranslate2 appends the config's eos_token, looked up in the source vocabulary.
    if (m.src_vocab.piece(Vocab::eos) != m.tgt_vocab.piece(Vocab::eos))
      throw input_error(m.src_vocab.path(), 0, "spells eos '" + m.src_vocab.piece(Vocab::eos) + "', the target vocabulary '" +
                                                   m.tgt_vocab.piece(Vocab::eos) + "': CTranslate2 has one eos_token");
  }
  config["yoke"] = {{"checkpoint", r.from},
                    {"task", name_of(c.task)},
                    {"tie", name_of(c.tie)},
                    {"output", name_of(c.output)},
                    {"norm", name_of(c.norm)},
                    {"positions", name_of(c.positions)},
                    {"max_positions", c.max_positions},
                    {"decoding", {{"beam", c.beam}, {"lenpen", c.lenpen}, {"max_len_a", c.max_len_a}, {"max_len_b", c.max_len_b}}}};
  write_json(to / "config.json", config);  // sorted keys, as ModelConfig.save_as_json writes them
  r.files = {"config.json"};

  // The pieces by id; one shared file when both sides have the same (model_spec.py's rule).
  const auto tgt = pieces(m.tgt_vocab, emb.target().vocab());
  auto vocab_file = [&](const std::string& name, const std::vector<std::string>& tokens) {
    write_json(to / (name + ".json"), tokens);
    r.files.push_back(name + ".json");
  };
  if (lm) {
    vocab_file("vocabulary", tgt);
  } else if (const auto src = pieces(m.src_vocab, emb.source()->vocab()); src == tgt) {
    vocab_file("shared_vocabulary", tgt);
  } else {
    vocab_file("source_vocabulary", src);
    vocab_file("target_vocabulary", tgt);
  }
  for (const auto& f : copy_model_files(dir, staged.path())) r.files.push_back(f);
  r.replaced = staged.commit();
  r.to = (fs::path(out) / "model.bin").string();
  return r;
}

}  // namespace yoke
