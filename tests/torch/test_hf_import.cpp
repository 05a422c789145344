// `yoke import --format hf` (store/hf_import.h): yoke → Hugging Face → yoke round trips through the
// exporter (python/yoke_hf.py, Marian and Blenderbot, joint and separate vocabularies) give back the
// same tensors, bit for bit, and `yoke translate` gives the same bytes; a vocab.json in another
// order is mapped back; what yoke's Transformer does not compute is refused by name with nothing
// written; the imported directory fine-tunes (train --init_from) and inspects.
// The round trips through the exporter need Debian's python3-torch, python3-onnx and
// python3-sentencepiece (skipped, saying so, without them); the others build their Hugging Face
// directories here (write_hf_dir: the same names and config keys, for dot-product models).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "config/config.h"
#include "export_models.h"
#include "store/checkpoint.h"
#include "store/hf_import.h"
#include "store/model_export.h"
#include "store/model_store.h"
#include "store/safetensors.h"
#include "text/spm_api.h"
#include "text/vocab.h"
#include "util/json_file.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

bool python_can_export() {
  const std::string cmd = std::string(YOKE_PYTHON) + " -c 'import torch, onnx, sentencepiece' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// What python/yoke_hf.py writes for a dot-product model (no factored matrices), built here so that
// the tests of the mapping and of the refusals need no Python: the architecture's tensor names,
// its config keys, and the opus-mt tokenizer files (source.spm = target.spm = spm.model,
// vocab.json in SentencePiece order).
void write_hf_dir(const fs::path& model, const fs::path& out) {
  const auto m = load_model(model.string(), "", "cpu", ModelUse::read_weights);
  ASSERT_EQ(m.config.output, Estimator::dot);
  ASSERT_EQ(m.config.factored_rank, 0);
  const auto state = module_state(*m.model);
  const int64_t d = m.config.d_model, V = m.config.tgt_vocab_size;
  const bool blenderbot = m.config.norm == Norm::pre;
  const auto& e = *m.model->embeddings;
  const at::Tensor S = e.source()->full().detach(), T = e.target().full().detach(), U = e.output().full().detach();
  SafeTensors f;
  auto& t = f.tensors;
  t["model.shared.weight"] = S.clone();
  t["model.encoder.embed_tokens.weight"] = S.clone();
  t["model.decoder.embed_tokens.weight"] = T.clone();
  t["lm_head.weight"] = U.clone();
  t["final_logits_bias"] = at::zeros({1, V});
  t["model.encoder.embed_positions.weight"] = state.at("positions").clone();
  t["model.decoder.embed_positions.weight"] = state.at("positions").clone();
  auto attention = [&](const std::string& hf, const std::string& y) {
    const auto kv = state.at(y + "kv_weight");
    t[hf + "q_proj.weight"] = state.at(y + "q_weight");
    t[hf + "q_proj.bias"] = state.at(y + "q_bias");
    t[hf + "k_proj.weight"] = kv.narrow(0, 0, d).clone();
    t[hf + "k_proj.bias"] = at::zeros({d});
    t[hf + "v_proj.weight"] = kv.narrow(0, d, d).clone();
    t[hf + "v_proj.bias"] = state.at(y + "v_bias");
    t[hf + "out_proj.weight"] = state.at(y + "out_weight");
    t[hf + "out_proj.bias"] = state.at(y + "out_bias");
  };
  auto norm = [&](const std::string& hf, const std::string& y) {
    t[hf + "weight"] = state.at(y + "weight");
    t[hf + "bias"] = state.at(y + "bias");
  };
  for (const std::string side : {"encoder", "decoder"}) {
    const int layers = side == "encoder" ? m.config.encoder_layers : m.config.decoder_layers;
    for (int i = 0; i < layers; ++i) {
      const std::string hf = "model." + side + ".layers." + std::to_string(i) + ".";
      const std::string y = side + std::to_string(m.config.cross_layer ? 0 : i) + ".";
      attention(hf + "self_attn.", y + "self_attn.");
      norm(hf + "self_attn_layer_norm.", y + "self_attn_norm.");
      if (side == "decoder") {
        attention(hf + "encoder_attn.", y + "cross_attn.");
        norm(hf + "encoder_attn_layer_norm.", y + "cross_attn_norm.");
      }
      t[hf + "fc1.weight"] = state.at(y + "ffn.w1");
      t[hf + "fc1.bias"] = state.at(y + "ffn.b1");
      t[hf + "fc2.weight"] = state.at(y + "ffn.w2");
      t[hf + "fc2.bias"] = state.at(y + "ffn.b2");
      norm(hf + "final_layer_norm.", y + "ffn_norm.");
    }
    if (blenderbot) norm("model." + side + ".layer_norm.", side + "_norm.");
  }
  fs::create_directories(out);
  save_safetensors((out / "model.safetensors").string(), f);
  nlohmann::json config = {
      {"model_type", blenderbot ? "blenderbot" : "marian"}, {"vocab_size", V}, {"d_model", d},
      {"encoder_layers", m.config.encoder_layers}, {"decoder_layers", m.config.decoder_layers},
      {"encoder_attention_heads", m.config.heads}, {"decoder_attention_heads", m.config.heads},
      {"encoder_ffn_dim", m.config.ffn_dim}, {"decoder_ffn_dim", m.config.ffn_dim}, {"activation_function", "relu"},
      {"max_position_embeddings", m.config.max_positions}, {"scale_embedding", m.config.embed_scale == EmbedScale::sqrt},
      {"dropout", 0.0}, {"pad_token_id", Vocab::pad}, {"bos_token_id", Vocab::bos}, {"eos_token_id", Vocab::eos},
      {"decoder_start_token_id", Vocab::bos}, {"tie_word_embeddings", at::equal(T, U)}};
  if (!blenderbot) config["share_encoder_decoder_embeddings"] = at::equal(S, T);
  write_json((out / "config.json").string(), config);
  for (const char* f : {"source.spm", "target.spm"}) fs::copy_file(model / "spm.model", out / f);
  nlohmann::json vocab = nlohmann::json::object();
  for (int i = 0; i < m.tgt_vocab.size(); ++i) vocab[m.tgt_vocab.piece(i)] = i;
  write_json((out / "vocab.json").string(), vocab);
  write_json((out / "tokenizer_config.json").string(), {{"tokenizer_class", "MarianTokenizer"}});
}

// `dir` with its rows in another order, as opus-mt's vocab.json orders them (not SentencePiece's):
// a random permutation of vocab.json, of the embedding rows, of final_logits_bias and of the
// special ids in config.json. The model computes the same; only the numbering differs.
void shuffle_rows(const fs::path& dir, uint64_t seed) {
  auto vocab = read_json((dir / "vocab.json").string());
  auto config = read_json((dir / "config.json").string());
  auto file = load_safetensors((dir / "model.safetensors").string());
  const int64_t V = config.at("vocab_size").get<int64_t>();
  at::manual_seed(seed);
  const at::Tensor new_of_old = at::randperm(V, at::kLong), old_of_new = at::argsort(new_of_old);
  for (auto& [name, t] : file.tensors) {
    if (name == "final_logits_bias") t = t.index_select(1, old_of_new);
    else if (t.dim() == 2 && t.size(0) == V) t = t.index_select(0, old_of_new);
  }
  save_safetensors((dir / "model.safetensors").string(), file);
  for (auto& [piece, row] : vocab.items()) row = new_of_old[row.get<int64_t>()].item<int64_t>();
  write_json((dir / "vocab.json").string(), vocab);
  for (const char* key : {"pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id"})
    config[key] = new_of_old[config.at(key).get<int64_t>()].item<int64_t>();
  write_json((dir / "config.json").string(), config);
}

// `yoke import --format hf`; its exit status, its log in `log`.
int import_hf_cli(const fs::path& from, const fs::path& out, const fs::path& log) {
  return run({YOKE_BINARY, "import", "--format", "hf", "--model", from.string(), "--out", out.string()}, log);
}

// The same in this process (what the command runs), where a test needs no exit status: each
// `yoke` process loads LibTorch again.
void import_here(const fs::path& from, const fs::path& out) {
  fs::remove_all(out);
  import_hf(from.string(), out.string());
}

std::string translate(const fs::path& model, const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {YOKE_BINARY, "translate", "--model", model.string(), "--input",
                                   (data_dir() / "test.toy.src.txt").string(), "--threads", "1"};
  args.insert(args.end(), more.begin(), more.end());
  return output_of(args);
}

Config config_of(const fs::path& model) { return load_model(model.string(), "", "cpu", ModelUse::read_weights).config; }

// The imported model holds the original's parameters bit for bit, under the same names (the
// original's tie, norm and positions recovered from the Hugging Face directory); with `translations`,
// `yoke translate` (beam 5, scores) prints the same bytes for both: the same weights in the same
// operations give the same floats, so nothing is compared within a tolerance.
void expect_same_model(const fs::path& original, const fs::path& imported, const std::string& what,
                       bool translations = true) {
  const auto a = load_model(original.string(), "", "cpu", ModelUse::read_weights);
  const auto b = load_model(imported.string(), "", "cpu", ModelUse::read_weights);
  EXPECT_EQ(b.config.tie, a.config.tie) << what;
  EXPECT_EQ(b.config.norm, a.config.norm) << what;
  EXPECT_EQ(b.config.positions, a.config.positions) << what;
  EXPECT_EQ(b.config.embed_scale, a.config.embed_scale) << what;
  const auto sa = module_state(*a.model), sb = module_state(*b.model);
  if (!a.config.cross_layer) {  // written out whole: the imported model has every layer's copy
    EXPECT_EQ(sb.size(), sa.size()) << what;
    for (const auto& [name, t] : sa) {
      const auto it = sb.find(name);
      ASSERT_NE(it, sb.end()) << what << ": " << name;
      EXPECT_TRUE(at::equal(it->second, t)) << what << ": " << name;
    }
  }
  if (!translations) return;
  const auto expected = translate(original, {"--scores"});
  ASSERT_EQ(lines_of(expected).size(), 30u) << what;
  EXPECT_EQ(translate(imported, {"--scores"}), expected) << what;
}

// Post-norm settings become Marian, pre-norm ones Blenderbot; `separate`: on separate_data()'s
// vocabularies (the source's and the target's tables in one, python/yoke_hf.py's hf_tensors, as for
// a pre-norm model with tie none or decoder).
struct RoundTrip {
  Setting setting;
  bool separate = false;
  fs::path model() const {
    return separate ? model_dir(setting, separate_data().data, separate_data().pairs) : model_dir(setting);
  }
};

Setting with(const std::string& name, std::function<void(Config&)> set) { return {name, std::move(set)}; }

// The first is the default config (separate vocabularies, tie = decoder, pre-norm), which goes
// through the commands.
std::vector<RoundTrip> round_trip_settings() {
  return {
      {with("hf-sep-pre-decoder", [](Config& c) { c.norm = Norm::pre, c.tie = Tie::decoder; }), true},
      {with("hf-sep-post-none", [](Config& c) { c.norm = Norm::post, c.tie = Tie::none; }), true},
      {with("hf-post-none", [](Config& c) { c.norm = Norm::post, c.tie = Tie::none; })},
      {with("hf-post-decoder-unscaled", [](Config& c) { c.norm = Norm::post, c.tie = Tie::decoder, c.embed_scale = EmbedScale::one; })},
      {with("hf-post-srctgt-learned", [](Config& c) { c.norm = Norm::post, c.tie = Tie::src_tgt, c.positions = Positions::learned; })},
      {with("hf-post-all-crosslayer", [](Config& c) { c.norm = Norm::post, c.tie = Tie::all, c.cross_layer = true; })},
      {with("hf-pre-all", [](Config& c) { c.norm = Norm::pre, c.tie = Tie::all; })},
      {with("hf-pre-srctgt-learned", [](Config& c) { c.norm = Norm::pre, c.tie = Tie::src_tgt, c.positions = Positions::learned; })},
      {with("hf-pre-none", [](Config& c) { c.norm = Norm::pre, c.tie = Tie::none; })},
  };
}

// Nothing was written for --out: neither it nor a staged sibling of it exists.
void expect_nothing_written(const fs::path& out, const std::string& what) {
  EXPECT_FALSE(fs::exists(out)) << what;
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename().string().find("." + out.filename().string() + "."), std::string::npos) << e.path();
}

// A refusal (in this process: the command prints the same message and exits with status 2): the
// message holds `expected`, and nothing is written.
void expect_refused(const fs::path& from, const std::string& expected, const std::string& what) {
  const auto out = work_dir() / ("hf-refused-" + what);
  try {
    import_hf(from.string(), out.string());
    ADD_FAILURE() << what << ": imported";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << what << ": " << e.what();
  }
  expect_nothing_written(out, what);
}

// A copy of the Hugging Face directory `from`, changed by `change`.
fs::path changed_copy(const fs::path& from, const std::string& name, const std::function<void(const fs::path&)>& change) {
  const auto dir = work_dir() / ("hf-changed-" + name);
  fs::remove_all(dir);
  fs::copy(from, dir, fs::copy_options::recursive);
  change(dir);
  return dir;
}

void edit_json(const fs::path& file, const std::function<void(nlohmann::json&)>& edit) {
  auto j = read_json(file.string());
  edit(j);
  write_json(file.string(), j);
}

void edit_tensors(const fs::path& dir, const std::function<void(std::map<std::string, at::Tensor>&)>& edit) {
  auto f = load_safetensors((dir / "model.safetensors").string());
  edit(f.tensors);
  save_safetensors((dir / "model.safetensors").string(), f);
}

// The corpus's source sentences (data_dir() writes them).
std::vector<std::string> corpus_sentences() {
  data_dir();
  return lines_of(slurp(work_dir() / "corpus" / "train.src"));
}

// A SentencePiece model with the special ids of SentencePiece's defaults, as opus-mt's have them:
// <unk> 0, <s> 1, </s> 2 and no <pad>.
std::string opus_style_spm() {
  const auto lines = corpus_sentences();
  size_t next = 0;
  std::string model, vocab;
  const std::string error = spm::api().train(
      {{"vocab_size", "60"}, {"model_type", "unigram"}, {"minloglevel", "2"}, {"num_threads", "1"}},
      [&](std::string& s) {
        if (next >= lines.size()) return false;
        s = lines[next++];
        return true;
      },
      1, &model, &vocab);
  EXPECT_EQ(error, "");
  return model;
}

// Another SentencePiece model with yoke's special ids (a smaller vocabulary of the same corpus).
fs::path other_spm() {
  const auto lines = corpus_sentences();
  VocabTrainOptions o;
  o.model_prefix = (work_dir() / "hf-other-spm").string();
  o.vocab_size = 120;
  o.num_threads = 1;
  o.input_files = {"corpus/train.src"};
  train_vocab_on(o, {&lines});
  return o.model_prefix + ".model";
}

}  // namespace

// yoke → Hugging Face (python/yoke_hf.py) → yoke on both architectures: Marian with every tie
// scheme, unscaled embeddings, learned positions and cross_layer; Blenderbot with every tie; both
// with separate vocabularies. One exporter process writes all but the first model (the default
// config), which goes through `yoke export --format hf` and comes back through `yoke import
// --format hf`. A directory of two tables whose source rows could be emitted is refused.
TEST(HfImport, RoundTripsThroughTheExporterGiveTheSameWeightsAndTranslations) {
  if (!python_can_export())
    GTEST_SKIP() << YOKE_PYTHON << " cannot import torch, onnx and sentencepiece (Debian: python3-torch python3-onnx "
                 << "python3-sentencepiece): the round trips through python/yoke_hf.py are not run";
  const auto settings = round_trip_settings();
  std::string batch = std::string(YOKE_PYTHON) + " " + YOKE_SOURCE_DIR + "/python/yoke_hf.py";
  const auto log = work_dir() / "hf-roundtrip.log";
  for (size_t i = 1; i < settings.size(); ++i) {
    const auto& s = settings[i].setting;
    const auto st = work_dir() / (s.name + "-st"), hf = work_dir() / (s.name + "-hf");
    fs::remove_all(st);
    fs::remove_all(hf);
    export_model(settings[i].model().string(), st.string());
    Config c;
    s.set(c);
    batch += std::string(" ") + (c.norm == Norm::post ? "marian" : "blenderbot") + " '" + st.string() + "' '" +
             hf.string() + "'";
  }
  ASSERT_EQ(std::system((batch + " 2>'" + log.string() + "'").c_str()), 0) << slurp(log);
  const auto& first = settings.front();
  const auto first_hf = work_dir() / (first.setting.name + "-hf");
  fs::remove_all(first_hf);
  ASSERT_EQ(run({YOKE_BINARY, "export", "--model", first.model().string(), "--out", first_hf.string(), "--format",
                 "hf"}, log), 0)
      << slurp(log);
  for (const auto& k : settings) {
    const auto& s = k.setting;
    const auto hf = work_dir() / (s.name + "-hf"), back = work_dir() / (s.name + "-back");
    for (const char* f : {"source.spm", "target.spm", "vocab.json"}) EXPECT_TRUE(fs::exists(hf / f)) << s.name << ": " << f;
    if (&k == &first) {
      ASSERT_EQ(import_hf_cli(hf, back, log), 0) << s.name << "\n" << slurp(log);
      EXPECT_NE(slurp(log).find("imported "), std::string::npos) << slurp(log);
    } else {
      import_here(hf, back);
    }
    expect_same_model(work_dir() / ("export-model-" + s.name), back, s.name);
    EXPECT_EQ(config_of(back).joint_vocab, !k.separate) << s.name;
  }
  expect_refused(changed_copy(first_hf, "emits-source",
                              [&](const fs::path& d) {
                                edit_tensors(d, [](auto& t) { t.at("final_logits_bias").zero_(); });
                              }),
                 "tensor 'final_logits_bias' is not −inf on the", "emits-source");
}

// The mapping without Python: the directory write_hf_dir makes comes back as the model it came
// from, and so does the same directory with vocab.json, the rows and the special ids renumbered
// (opus-mt's vocab.json is in another order than its SentencePiece models).
TEST(HfImport, AVocabJsonInAnotherOrderIsMappedBackToSentencePieceOrder) {
  for (const auto& s : {with("hf-map-post-decoder", [](Config& c) { c.norm = Norm::post, c.tie = Tie::decoder; }),
                        with("hf-map-pre-srctgt", [](Config& c) { c.norm = Norm::pre, c.tie = Tie::src_tgt; })}) {
    const auto model = model_dir(s), hf = work_dir() / (s.name + "-hf"), back = work_dir() / (s.name + "-back");
    fs::remove_all(hf);
    write_hf_dir(model, hf);
    import_here(hf, back);
    expect_same_model(model, back, s.name, /*translations=*/false);

    const auto shuffled = changed_copy(hf, s.name + "-shuffled", [](const fs::path& d) { shuffle_rows(d, 5); });
    EXPECT_NE(read_json((shuffled / "config.json").string()).at("decoder_start_token_id"), Vocab::bos);
    const auto back2 = work_dir() / (s.name + "-back-shuffled");
    import_here(shuffled, back2);
    expect_same_model(model, back2, s.name + " shuffled");
  }
}

// transformers leaves the tied copies and Marian's sinusoids out of the files it saves: the import
// takes the tied matrices from the one saved, and computes the table as modeling_marian.py does
// (another sinusoid than yoke's: imported as a learned table).
TEST(HfImport, TiedCopiesAndMarianPositionsLeftOutAreTakenAsTransformersTakesThem) {
  const auto model = model_dir(with("hf-lean-post-all", [](Config& c) { c.norm = Norm::post, c.tie = Tie::all; }));
  const auto hf = work_dir() / "hf-lean-hf", back = work_dir() / "hf-lean-back";
  fs::remove_all(hf);
  write_hf_dir(model, hf);
  edit_tensors(hf, [](auto& t) {
    for (const char* name : {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight",
                             "final_logits_bias", "model.encoder.embed_positions.weight",
                             "model.decoder.embed_positions.weight"})
      t.erase(name);
  });
  import_here(hf, back);
  const auto m = load_model(back.string(), "", "cpu", ModelUse::read_weights);
  EXPECT_EQ(m.config.tie, Tie::all);
  EXPECT_EQ(m.config.positions, Positions::learned);
  const auto table = module_state(*m.model).at("positions");
  const int64_t d = m.config.d_model;
  EXPECT_TRUE(at::equal(table[0], at::cat({at::zeros({d / 2}), at::ones({d / 2})})));
  // Position 3, frequency index 1: sin and cos of 3 / 10000^(2/d), in double rounded to float.
  EXPECT_EQ(table[3][1].item<float>(), float(std::sin(3.0 / std::pow(10000.0, 2.0 / double(d)))));
  EXPECT_EQ(table[3][d / 2 + 1].item<float>(), float(std::cos(3.0 / std::pow(10000.0, 2.0 / double(d)))));
  EXPECT_TRUE(at::equal(module_state(*m.model).at("embeddings.shared.weight"),
                        module_state(*load_model(model.string(), "", "cpu", ModelUse::read_weights).model)
                            .at("embeddings.shared.weight")));
}

// What yoke's Transformer would compute otherwise, or cannot map, is refused before anything is
// written, naming the file and the key or tensor.
TEST(HfImport, WhatYokeCannotComputeIsRefusedByNameAndNothingIsWritten) {
  const auto model = model_dir(with("hf-refuse-post-decoder", [](Config& c) { c.norm = Norm::post, c.tie = Tie::decoder; }));
  const auto hf = work_dir() / "hf-refuse-hf";
  fs::remove_all(hf);
  write_hf_dir(model, hf);
  auto config = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    return changed_copy(hf, name, [&](const fs::path& d) { edit_json(d / "config.json", edit); });
  };
  // The command: exit status 2, the message naming the file and the key, nothing written.
  const auto swish = config("swish", [](auto& c) { c["activation_function"] = "swish"; });
  const auto out = work_dir() / "hf-refused-cli", log = work_dir() / "hf-refused-cli.log";
  EXPECT_EQ(import_hf_cli(swish, out, log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find((swish / "config.json").string() + ": \"activation_function\" is \"swish\": yoke's "
                            "feed-forward layers compute ReLU"), std::string::npos) << slurp(log);
  expect_nothing_written(out, "cli");

  expect_refused(config("no-activation", [](auto& c) { c.erase("activation_function"); }),
                 "\"activation_function\" is \"gelu (absent)\"", "no-activation");
  expect_refused(config("bart", [](auto& c) { c["model_type"] = "bart"; }), "\"model_type\" is \"bart\"", "bart");
  expect_refused(config("heads", [](auto& c) { c["decoder_attention_heads"] = 1; }),
                 "\"decoder_attention_heads\" is 1 and encoder_attention_heads 2", "heads");
  expect_refused(config("prenorm-marian", [](auto& c) { c["normalize_before"] = true; }),
                 "\"normalize_before\" is true", "prenorm-marian");
  expect_refused(config("start", [](auto& c) { c["decoder_start_token_id"] = Vocab::pad; }),
                 "\"decoder_start_token_id\" is 0 (vocab.json's '<pad>'): yoke's first decoder input is '<s>'", "start");
  expect_refused(config("eos", [](auto& c) { c["eos_token_id"] = 7; }), "\"eos_token_id\" is 7", "eos");
  expect_refused(config("target-vocab", [](auto& c) { c["decoder_vocab_size"] = 50; }),
                 "\"decoder_vocab_size\" is 50", "target-vocab");

  auto tensors = [&](const std::string& name, const std::function<void(std::map<std::string, at::Tensor>&)>& edit) {
    return changed_copy(hf, name, [&](const fs::path& d) { edit_tensors(d, edit); });
  };
  expect_refused(tensors("bias", [](auto& t) { t["final_logits_bias"][0][5] = 0.5f; }),
                 "tensor 'final_logits_bias' is not zero", "bias");
  expect_refused(tensors("extra", [](auto& t) { t["model.encoder.layernorm_embedding.weight"] = at::ones({16}); }),
                 "holds tensor 'model.encoder.layernorm_embedding.weight'", "extra");
  expect_refused(tensors("missing", [](auto& t) { t.erase("model.decoder.layers.1.fc2.bias"); }),
                 "lacks tensor 'model.decoder.layers.1.fc2.bias'", "missing");
  expect_refused(tensors("shape", [](auto& t) { t["model.encoder.layers.0.fc1.weight"] = at::zeros({25, 16}); }),
                 "tensor 'model.encoder.layers.0.fc1.weight' has shape [25, 16], config.json gives [24, 16]", "shape");
  expect_refused(tensors("untied-head", [](auto& t) { t["lm_head.weight"][4][0] = 1.0f; }),
                 "tensor 'lm_head.weight' differs from the decoder's input embedding", "untied-head");
  expect_refused(tensors("positions", [](auto& t) { t["model.decoder.embed_positions.weight"][1][0] = 1.0f; }),
                 "yoke adds one position table to both sides", "positions");

  auto vocab = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    return changed_copy(hf, name, [&](const fs::path& d) { edit_json(d / "vocab.json", edit); });
  };
  const auto v = load_model(model.string(), "", "cpu", ModelUse::read_weights).tgt_vocab;
  const std::string piece = v.piece(10);
  expect_refused(vocab("lacks", [&](auto& j) { j["not-a-piece"] = j.at(piece); j.erase(piece); }),
                 "vocab.json: lacks '" + piece + "', id 10 of source.spm", "lacks");
  expect_refused(vocab("same-row", [&](auto& j) { j[piece] = j.at(v.piece(11)); }), "the same row 11", "same-row");
  expect_refused(vocab("size", [&](auto& j) { j["extra"] = v.size(); }), "every piece must have a row", "size");

  expect_refused(changed_copy(hf, "separate",
                              [&](const fs::path& d) {
                                fs::copy_file(other_spm(), d / "target.spm", fs::copy_options::overwrite_existing);
                              }),
                 "target.spm: differs from source.spm", "separate");
  expect_refused(changed_copy(hf, "opus-spm",
                              [&](const fs::path& d) {
                                const auto spm = opus_style_spm();
                                write_text(d / "source.spm", spm);
                                write_text(d / "target.spm", spm);
                              }),
                 "SentencePiece model has special ids pad=-1 unk=0 bos=1 eos=2", "opus-spm");
  expect_refused(changed_copy(hf, "separate-vocabs",
                              [&](const fs::path& d) {
                                edit_json(d / "tokenizer_config.json", [](auto& j) { j["separate_vocabs"] = true; });
                              }),
                 "target_vocab.json: not found", "separate-vocabs");
  expect_refused(changed_copy(hf, "pickle",
                              [&](const fs::path& d) {
                                fs::rename(d / "model.safetensors", d / "pytorch_model.bin");
                              }),
                 "pytorch_model.bin: is a Python pickle", "pickle");
  // --out may not be the directory read (nor hold it, nor lie in it).
  try {
    import_hf(hf.string(), (hf / "back").string());
    ADD_FAILURE() << "imported into the directory read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--model"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(hf / "back"));
}
// A config.json of the shape of Helsinki-NLP/opus-mt-en-de's (as transformers' converter writes
// them for opus-mt): refused at its activation before the weights are looked for.
TEST(HfImport, AnOpusMtConfigIsRefusedAtItsSwishActivation) {
  const auto dir = work_dir() / "hf-opus-mt-en-de";
  fs::create_directories(dir);
  write_json((dir / "config.json").string(),
             nlohmann::json::parse(R"({
      "activation_dropout": 0.0, "activation_function": "swish", "add_bias_logits": false,
      "add_final_layer_norm": false, "architectures": ["MarianMTModel"], "attention_dropout": 0.0,
      "bad_words_ids": [[58100]], "bos_token_id": 0, "d_model": 512, "decoder_attention_heads": 8,
      "decoder_ffn_dim": 2048, "decoder_layers": 6, "decoder_start_token_id": 58100, "decoder_vocab_size": 58101,
      "dropout": 0.1, "encoder_attention_heads": 8, "encoder_ffn_dim": 2048, "encoder_layers": 6,
      "eos_token_id": 0, "forced_eos_token_id": 0, "is_encoder_decoder": true, "max_length": 512,
      "max_position_embeddings": 512, "model_type": "marian", "normalize_before": false,
      "normalize_embedding": false, "num_beams": 4, "pad_token_id": 58100, "scale_embedding": true,
      "share_encoder_decoder_embeddings": true, "static_position_embeddings": true, "vocab_size": 58101})"));
  expect_refused(dir, (dir / "config.json").string() + ": \"activation_function\" is \"swish\"", "opus-mt-en-de");
}

// The imported directory is a model directory: `yoke inspect` reads it, and `yoke train
// --init_from` fine-tunes it on data with its vocabulary (data_dir()'s spm.model, which the
// export carried as source.spm).
TEST(HfImport, TheImportedDirectoryInspectsAndFineTunes) {
  const auto model = model_dir(with("hf-tune-post-all", [](Config& c) { c.norm = Norm::post, c.tie = Tie::all; }));
  const auto hf = work_dir() / "hf-tune-hf", back = work_dir() / "hf-tune-back", log = work_dir() / "hf-tune.log";
  fs::remove_all(hf);
  write_hf_dir(model, hf);
  import_here(hf, back);
  const auto piece = load_model(back.string(), "", "cpu", ModelUse::read_weights).src_vocab.piece(20);
  EXPECT_NE(output_of({YOKE_BINARY, "inspect", "--model", back.string(), "--word", piece, "--top", "3"}).find(piece),
            std::string::npos);
  const auto config_file = work_dir() / "hf-tune.conf", tuned = work_dir() / "hf-tune-run";
  write_text(config_file, config_file_text(config_of(back)));
  ASSERT_EQ(run({YOKE_BINARY, "train", "--config", config_file.string(), "--set", "init_from=" + back.string(), "--set",
                 "data=" + data_dir().string(), "--set", "save_dir=" + tuned.string(), "--set", "max_updates=2",
                 "--set", "max_tokens=300", "--set", "valid_bleu=false", "--set", "threads=1"},
                log),
            0)
      << slurp(log);
  EXPECT_NE(slurp(log).find("init_from: starting from the weights of " + (back / "checkpoint_best.ykp").string()),
            std::string::npos)
      << slurp(log);
  EXPECT_TRUE(fs::exists(tuned / "checkpoint_last.ykp"));
}
