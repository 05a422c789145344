// Small random models of every setting the export covers (each tie scheme, estimator, factored
// and shared-private matrices, the three archs, cross_layer, language models), as model
// directories on data_dir()'s vocabulary (or another's: separate_data() has one a side): what the
// safetensors (test_export.cpp), ONNX (test_onnx.cpp), Hugging Face and CTranslate2 exports are
// checked on.
#pragma once
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "align/pair_data.h"
#include "cli_helpers.h"
#include "config/config.h"
#include "model/transformer.h"
#include "store/checkpoint.h"
#include "store/model_files.h"
#include "store/model_store.h"
#include "text/data_meta.h"
#include "text/vocab.h"
#include "text/vocab_files.h"

namespace yoke::test {

// A batch for one model: 5 source rows of various lengths (ids + eos, right-padded) and 5 target
// prefixes starting with bos, drawn from `seed`.
inline std::pair<at::Tensor, at::Tensor> parity_batch(int64_t vocab, uint64_t seed) {
  at::manual_seed(seed);
  const std::vector<int64_t> src_len = {7, 3, 10, 1, 5}, tgt_len = {6, 9, 2, 4, 9};
  auto src = at::zeros({5, 11}, at::kLong), tgt = at::zeros({5, 9}, at::kLong);
  for (int64_t i = 0; i < 5; ++i) {
    src[i].narrow(0, 0, src_len[i]).copy_(at::randint(4, vocab, {src_len[i]}, at::kLong));
    src[i][src_len[i]] = Vocab::eos;
    tgt[i][0] = Vocab::bos;
    tgt[i].narrow(0, 1, tgt_len[i] - 1).copy_(at::randint(4, vocab, {tgt_len[i] - 1}, at::kLong));
  }
  return {src, tgt};
}

struct Setting {
  std::string name;
  std::function<void(Config&)> set;
};

inline std::vector<Setting> settings() {
  return {
      {"none-dot", [](Config& c) { c.tie = Tie::none; }},
      {"decoder-l2", [](Config& c) { c.tie = Tie::decoder, c.output = Estimator::l2; }},
      {"all-square", [](Config& c) { c.tie = Tie::all, c.output = Estimator::square; }},
      {"srctgt-distance", [](Config& c) { c.tie = Tie::src_tgt, c.output = Estimator::distance; }},
      {"all-cosine-unscaled", [](Config& c) { c.tie = Tie::all, c.output = Estimator::cosine, c.embed_scale = EmbedScale::one; }},
      {"none-cosine-factored", [](Config& c) { c.tie = Tie::none, c.output = Estimator::cosine, c.factored_rank = 6; }},
      {"all-l2-factored", [](Config& c) { c.tie = Tie::all, c.output = Estimator::l2, c.factored_rank = 6; }},
      {"sharedprivate-dot", [](Config& c) { c.tie = Tie::shared_private; }},
      {"sharedprivate-l2", [](Config& c) { c.tie = Tie::shared_private, c.output = Estimator::l2; }},
      {"lightconv-post", [](Config& c) { c.arch = Arch::lightconv, c.norm = Norm::post, c.encoder_kernels = "3,5"; }},
      {"dynamicconv-learned",
       [](Config& c) {
         c.arch = Arch::dynamicconv, c.tie = Tie::decoder, c.output = Estimator::distance;
         c.positions = Positions::learned, c.conv_glu = false, c.decoder_kernels = "3";
       }},
      {"crosslayer-all", [](Config& c) { c.tie = Tie::all, c.cross_layer = true; }},
      {"lm-all-cosine", [](Config& c) { c.task = Task::lm, c.tie = Tie::all, c.output = Estimator::cosine; }},
      {"lm-none-square", [](Config& c) { c.task = Task::lm, c.tie = Tie::none, c.output = Estimator::square; }},
  };
}

// The word pairs of `data` for shared-private (yoke pair), into `out`.
inline fs::path make_pairs(const fs::path& data, const fs::path& out) {
  PairDataOptions o;
  o.data_dir = data.string();
  o.out_path = out.string();
  std::ostringstream log;
  pair_data(o, log);
  return out;
}

inline const fs::path& pairs_file() {
  static const fs::path p = make_pairs(data_dir(), work_dir() / "export-pairs.tsv");
  return p;
}

// A model directory with random weights (every parameter moved off its initial value, so that
// norms and biases count too) and the vocabularies of `data` (data_dir(), or another prepared
// directory: separate vocabularies; shared-private then takes `pairs`, made from `data`).
inline fs::path model_dir(const Setting& s, const fs::path& data = data_dir(), const fs::path& pairs = {}) {
  const auto dir = work_dir() / ("export-model-" + s.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto meta = DataMeta::read(data.string());
  Config c;
  c.src_vocab_size = int(meta.src_vocab_size);
  c.tgt_vocab_size = int(meta.tgt_vocab_size);
  c.joint_vocab = meta.joint;
  c.d_model = 16;
  c.heads = 2;
  c.ffn_dim = 24;
  c.encoder_layers = c.decoder_layers = 2;
  c.dropout = 0;
  c.max_positions = 64;
  s.set(c);
  for (const char* f : kVocabularyFiles)
    if (fs::exists(data / f)) fs::copy_file(data / f, dir / f);
  if (c.tie == Tie::shared_private) {
    fs::copy_file(pairs.empty() ? pairs_file() : pairs, dir / "pairs.tsv");
    c.pairs = (dir / "pairs.tsv").string();
  }
  c.validate();
  at::manual_seed(11);
  auto model = build_model(c, dir.string());
  {
    at::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(at::randn(p.sizes()) * 0.2);
  }
  Checkpoint ck;
  ck.meta = {{"config", c.to_json()}, {"vocab", vocab_checksums(dir.string())}, {"state", {{"update", 7}}}};
  put_model_weights(ck, module_state(*model));
  save_checkpoint((dir / "checkpoint_best.ykp").string(), ck);
  return dir;
}

// A prepared copy of data_dir()'s corpus with one vocabulary per side, and its word pairs.
struct SeparateData {
  fs::path data, pairs;
};
inline const SeparateData& separate_data() {
  static const SeparateData d = [] {
    data_dir();  // writes the corpus
    PrepareOptions p = synthetic_prepare_options((work_dir() / "corpus").string(), (work_dir() / "sep-data").string());
    p.joint = false;
    p.vocab_size = 120;
    std::ostringstream log;
    prepare_data(p, log);
    return SeparateData{p.out_dir, make_pairs(p.out_dir, work_dir() / "sep-pairs.tsv")};
  }();
  return d;
}

}  // namespace yoke::test
