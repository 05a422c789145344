// `yoke export --format ctranslate2` against CTranslate2 4.8.1, the build in
// ../shared/peers/ctranslate2 (its Python package, driven by python/yoke_ct2.py):
//   - what the specs cannot hold is refused by name, leaving nothing behind (no CTranslate2 needed);
//   - model.bin, config.json and the vocabularies are byte for byte what CTranslate2's own writer
//     (specs/model_spec.py) saves from the same variables, for every setting;
//   - on small random models of every setting (each tie, estimator, norm, positions, factored,
//     shared-private, cross_layer, separate vocabularies, language models), CTranslate2 scores
//     given targets with yoke's log-probabilities;
//   - on a small model trained on Multi30k, CTranslate2's greedy translations are `yoke translate
//     --beam 1`'s, its beam-4 ones are yoke's except where a search meets the length limit, and
//     int8 (compute_type int8) loses at most 0.3 BLEU against fp32.
// Skipped, saying why, without ../shared/peers/ctranslate2 or what it needs (Debian's libdnnl2,
// libopenblas0, libgomp1, python3-numpy; python3-sentencepiece), and the Multi30k test without
// ../shared/data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "cli_helpers.h"
#include "config/config.h"
#include "decode/batched_decoding.h"
#include "eval/bleu.h"
#include "export_models.h"
#include "margin.h"
#include "multi30k_small.h"
#include "store/ctranslate2_export.h"
#include "store/ctranslate2_model_file.h"
#include "store/model_store.h"
#include "text/corpus.h"
#include "text/vocab.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

const fs::path kPeer = fs::path(YOKE_SHARED_DIR) / "peers" / "ctranslate2";
const fs::path kScript = fs::path(YOKE_SOURCE_DIR) / "python" / "yoke_ct2.py";

// python/yoke_ct2.py with the peer's package on the path.
std::vector<std::string> yoke_ct2(const std::vector<std::string>& args) {
  std::vector<std::string> cmd{"/usr/bin/env", "PYTHONPATH=" + (kPeer / "python").string(), YOKE_PYTHON,
                               kScript.string()};
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

// Why CTranslate2 cannot be run here, or "" when it can.
const std::string& missing_ctranslate2() {
  static const std::string why = [] {
    if (!fs::exists(kPeer / "python" / "ctranslate2")) return kPeer.string() + " is absent";
    const auto log = work_dir() / "ct2-import.log";
    const std::string probe = "import sys; sys.path.insert(0, '" + kScript.parent_path().string() +
                              "'); import yoke_ct2, numpy, sentencepiece; yoke_ct2.import_ctranslate2()";
    if (run({"/usr/bin/env", "PYTHONPATH=" + (kPeer / "python").string(), YOKE_PYTHON, "-c", probe}, log) != 0) {
      const auto lines = lines_of(slurp(log));
      return std::string(YOKE_PYTHON) + " cannot import ctranslate2 from " + kPeer.string() + " (" +
             (lines.empty() ? "" : lines.back()) +
             "); it needs Debian's libdnnl2 libopenblas0 libgomp1 python3-numpy, and python3-sentencepiece "
             "(scripts/install-deps.sh)";
    }
    return std::string();
  }();
  return why;
}

#define SKIP_WITHOUT_CTRANSLATE2() \
  if (const auto& why = missing_ctranslate2(); !why.empty()) GTEST_SKIP() << why << ": CTranslate2 not checked"

std::string refusal(const Config& c) {
  try {
    check_ctranslate2_expressible(c);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

// Every setting the specs hold: export_models.h's (less the convolutions), their post-norm twins,
// separate vocabularies, learned positions and direct bridging (whose W decoding does not read).
struct Case {
  Setting setting;
  bool separate = false;
};
std::vector<Case> expressible_cases() {
  std::vector<Case> cases;
  for (const auto& s : settings()) {
    Config c;
    s.set(c);
    if (refusal(c).empty()) cases.push_back({s});
  }
  auto post = [](const std::string& name, std::function<void(Config&)> set) {
    return Setting{name, [set](Config& c) { set(c), c.norm = Norm::post; }};
  };
  cases.push_back({post("post-none-dot", [](Config& c) { c.tie = Tie::none; })});
  cases.push_back({post("post-decoder-l2-learned",
                        [](Config& c) { c.tie = Tie::decoder, c.output = Estimator::l2, c.positions = Positions::learned; })});
  cases.push_back({post("post-srctgt-distance", [](Config& c) { c.tie = Tie::src_tgt, c.output = Estimator::distance; })});
  cases.push_back({post("post-all-cosine-factored",
                        [](Config& c) { c.tie = Tie::all, c.output = Estimator::cosine, c.factored_rank = 6; })});
  cases.push_back({post("post-crosslayer-square", [](Config& c) { c.cross_layer = true, c.output = Estimator::square; })});
  cases.push_back({post("post-lm-none-dot", [](Config& c) { c.task = Task::lm, c.tie = Tie::none; })});
  cases.push_back({{"bridging-none", [](Config& c) { c.tie = Tie::none, c.bridging = Bridging::direct; }}});
  cases.push_back({{"sep-none-dot", [](Config& c) { c.tie = Tie::none; }}, true});
  cases.push_back({{"sep-decoder-distance-unscaled",
                    [](Config& c) { c.tie = Tie::decoder, c.output = Estimator::distance, c.embed_scale = EmbedScale::one; }},
                   true});
  cases.push_back({{"sep-sharedprivate-l2", [](Config& c) { c.tie = Tie::shared_private, c.output = Estimator::l2; }}, true});
  return cases;
}

fs::path case_model(const Case& k) {
  return k.separate ? model_dir(k.setting, separate_data().data, separate_data().pairs) : model_dir(k.setting);
}

fs::path exported(const Case& k) {
  const auto out = work_dir() / ("ct2-" + k.setting.name);
  export_ctranslate2(case_model(k).string(), out.string(), "", /*replace=*/true);
  return out;
}

std::string ids_text(const std::vector<int64_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? " " : "") + std::to_string(ids[i]);
  return s;
}

}  // namespace

// model.bin's bytes for a small model, spelled out from model_spec.py's _serialize: the header,
// the stored variables in name order (the int16 scalar among them), then the alias of the repeat.
TEST(Ctranslate2ModelFile, TheBytesAreModelSpecsSerialization) {
  CTranslate2Model m;
  m.spec = "TransformerSpec";
  m.revision = 7;
  m.variables["b/weight"] = at::tensor({1.5f, -2.0f});
  m.variables["a/num_heads"] = at::scalar_tensor(4, at::kShort);
  m.variables["c/weight"] = at::tensor({1.5f, -2.0f});  // equal to b/weight: an alias
  m.variables["d/flag"] = at::scalar_tensor(1, at::kChar);
  const auto path = work_dir() / "ct2-format.bin";
  const auto w = write_ctranslate2_model(path.string(), m);
  EXPECT_EQ(w.stored, 3u);
  EXPECT_EQ(w.aliases, 1u);
  std::string want;
  auto u8 = [&](uint8_t v) { want.push_back(char(v)); };
  auto u16 = [&](uint16_t v) { want.append(reinterpret_cast<const char*>(&v), 2); };
  auto u32 = [&](uint32_t v) { want.append(reinterpret_cast<const char*>(&v), 4); };
  auto str = [&](const std::string& s) { u16(uint16_t(s.size() + 1)), want += s, u8(0); };
  u32(6), str("TransformerSpec"), u32(7), u32(3);
  str("a/num_heads"), u8(0), u8(2), u32(2), u16(4);
  str("b/weight"), u8(1), u32(2), u8(0), u32(8);
  for (float f : {1.5f, -2.0f}) want.append(reinterpret_cast<const char*>(&f), 4);
  str("d/flag"), u8(0), u8(1), u32(1), u8(1);
  u32(1), str("c/weight"), str("b/weight");
  EXPECT_TRUE(slurp(path) == want) << "model.bin differs from the format's bytes";

  m.variables["e/double"] = at::zeros({2}, at::kDouble);
  try {
    write_ctranslate2_model(path.string(), m);
    ADD_FAILURE() << "a float64 variable was written";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": variable e/double has dtype Double"), std::string::npos)
        << e.what();
  }
}

TEST(Ctranslate2Export, ConvolutionsAreRefusedByNameAndEverythingElseIsHeld) {
  Config c;
  for (Arch a : {Arch::lightconv, Arch::dynamicconv}) {
    c.arch = a;
    EXPECT_NE(refusal(c).find(std::string("arch = ") + name_of(a)), std::string::npos) << refusal(c);
  }
  c.arch = Arch::transformer;
  for (Tie t : {Tie::none, Tie::decoder, Tie::all, Tie::src_tgt, Tie::shared_private})
    for (Norm n : {Norm::pre, Norm::post})
      for (Task task : {Task::translate, Task::lm}) {
        c.tie = t, c.norm = n, c.task = task;
        EXPECT_EQ(refusal(c), "") << name_of(t) << " " << name_of(n) << " " << name_of(task);
      }
}

// Refused before anything is written: a lightconv model, and an int8 model directory (whose
// rounded weights CTranslate2 would take for the model's).
TEST(Ctranslate2Export, ARefusedModelLeavesNothingBehind) {
  const auto log = work_dir() / "ct2-refused.log";
  Setting light;
  for (const auto& s : settings())
    if (s.name == "lightconv-post") light = s;
  const auto out = work_dir() / "ct2-refused";
  EXPECT_EQ(run({YOKE_BINARY, "export", "--model", model_dir(light).string(), "--out", out.string(), "--format",
                 "ctranslate2"}, log), 2);
  EXPECT_NE(slurp(log).find("arch = lightconv"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(out));

  const auto int8 = work_dir() / "ct2-int8-model";
  ASSERT_EQ(run({YOKE_BINARY, "quantize", "--model", tiny_translation_model().string(), "--out", int8.string()}, log), 0)
      << slurp(log);
  EXPECT_EQ(run({YOKE_BINARY, "export", "--model", int8.string(), "--out", out.string(), "--format", "ctranslate2"},
                log), 2);
  EXPECT_NE(slurp(log).find("is an int8 model"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(work_dir()))
    EXPECT_EQ(e.path().filename().string().find(".ct2-refused.partial"), std::string::npos) << e.path();
}

// CTranslate2's own writer, given the variables yoke wrote (python/yoke_ct2.py resave: the spec
// refuses a name it does not declare and one it requires that is missing), writes the same bytes:
// the names, dtypes, order, aliases and the JSON files are the spec's.
TEST(Ctranslate2Export, TheDirectoryIsWhatCTranslate2sOwnWriterWrites) {
  SKIP_WITHOUT_CTRANSLATE2();
  const auto log = work_dir() / "ct2-resave.log";
  const auto cases = expressible_cases();
  std::vector<std::string> args{"resave"};  // every case in one process: each one imports CTranslate2 for a second
  std::vector<std::pair<fs::path, fs::path>> dirs;
  for (const auto& k : cases) {
    const auto out = exported(k), again = work_dir() / ("ct2-again-" + k.setting.name);
    fs::remove_all(again);
    dirs.push_back({out, again});
    args.insert(args.end(), {out.string(), again.string()});
  }
  ASSERT_EQ(run(yoke_ct2(args), log), 0) << slurp(log);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [out, again] = dirs[i];
    const auto& k = cases[i];
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(again)) {
      const auto name = e.path().filename();
      EXPECT_TRUE(slurp(out / name) == slurp(e.path())) << k.setting.name << ": " << name << " differs";
      ++files;
    }
    Config c;
    k.setting.set(c);
    EXPECT_EQ(files, c.task == Task::lm || !k.separate ? 3u : 4u) << k.setting.name;  // model.bin, config.json, vocabularies
  }
}

// Per setting, 5 random pairs: CTranslate2's log-probabilities of the target tokens and eos
// (Translator.score_batch; Generator.score_batch for a language model) against yoke's.
TEST(Ctranslate2Export, EverySettingScoresTargetsWithYokesLogProbabilities) {
  SKIP_WITHOUT_CTRANSLATE2();
  const auto log = work_dir() / "ct2-score.log";
  const auto cases = expressible_cases();
  std::vector<std::string> args{"score"};  // every case in one process, as above
  std::vector<std::vector<at::Tensor>> expected(cases.size());
  std::vector<fs::path> score_files;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& k = cases[c];
    const auto out = exported(k);
    auto m = load_model(case_model(k).string(), "", "cpu", ModelUse::read_weights);
    const bool lm = m.config.task == Task::lm;
    at::manual_seed(3);
    std::vector<std::vector<int64_t>> srcs, tgts;
    at::NoGradGuard no_grad;
    for (int64_t len : {1, 4, 9, 2, 6}) {
      auto random_ids = [](int64_t n, int64_t vocab) {
        const auto t = at::randint(4, vocab, {n}, at::kLong);
        return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + n);
      };
      srcs.push_back(random_ids(len + 2, m.config.src_vocab_size > 0 ? m.config.src_vocab_size : 8));
      tgts.push_back(random_ids(len, m.config.tgt_vocab_size));
      std::vector<int64_t> in{Vocab::bos}, target = tgts.back(), src = srcs.back();
      in.insert(in.end(), target.begin(), target.end());
      target.push_back(Vocab::eos);
      src.push_back(Vocab::eos);
      EncoderOutput enc;
      if (!lm) enc = m.model->encode(at::tensor(src).view({1, -1}));
      const auto h = m.model->decode(at::tensor(in).view({1, -1}), lm ? nullptr : &enc)[0];
      const auto lp = at::log_softmax(m.model->logits(h), -1);
      expected[c].push_back(lp.gather(1, at::tensor(target).view({-1, 1})).view({-1}));
    }
    const auto pairs = work_dir() / ("ct2-pairs-" + k.setting.name + ".txt"),
               scores = work_dir() / ("ct2-scores-" + k.setting.name + ".txt");
    std::ofstream f(pairs);
    for (size_t i = 0; i < tgts.size(); ++i) f << (lm ? "" : ids_text(srcs[i]) + "\t") << ids_text(tgts[i]) << "\n";
    args.insert(args.end(), {out.string(), pairs.string(), scores.string()});
    score_files.push_back(scores);
  }
  ASSERT_EQ(run(yoke_ct2(args), log), 0) << slurp(log);
  size_t checked = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto& name = cases[c].setting.name;
    const auto lines = lines_of(slurp(score_files[c]));
    ASSERT_EQ(lines.size(), expected[c].size()) << name;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::vector<float> got;
      std::istringstream in(lines[i]);
      for (float v; in >> v;) got.push_back(v);
      ASSERT_EQ(int64_t(got.size()), expected[c][i].numel()) << name << " pair " << i;
      // fp32 on both sides in other operation orders (CTranslate2's fused q|k|v and oneDNN products,
      // the estimator folded into the projection): the bound of the ONNX and Hugging Face exports'
      // logits (test_onnx.cpp, test_hf_export.cpp).
      YOKE_EXPECT_AT_MOST((at::tensor(got) - expected[c][i]).abs().max().item<double>(), 1e-4) << name << " pair " << i;
    }
    ++checked;
  }
  EXPECT_GE(checked, 20u);
}

// A model trained on 3000 Multi30k pairs (multi30k_small.h's data; d = 64, 2+2 layers, tied as
// configs/multi30k-ende.conf, 1000 updates: about a minute, BLEU about 9 on test_2016_flickr:
// trained enough that int8's rounding meets real decisions, not noise), exported by the command and
// run as python/yoke_ct2.py runs it: each sentence with yoke's length limit as its
// max_decoding_length, and eos counted in the length penalty (return_end_token) as yoke counts it.
// The 1000 sentences of test_2016_flickr, held out from training.
TEST(Ctranslate2Export, Multi30kTranslationsAreYokesAndInt8KeepsTheBleu) {
  SKIP_WITHOUT_CTRANSLATE2();
  const auto m30k = multi30k_small_model(
      "ct2-m30k", {"--tie", "all", "--d_model", "64", "--heads", "4", "--ffn_dim", "256", "--encoder_layers", "2",
                   "--decoder_layers", "2", "--max_updates", "1000", "--valid_interval", "1000", "--warmup", "100",
                   "--lr", "0.003"});
  if (m30k.model.empty()) GTEST_SKIP() << YOKE_SHARED_DIR << "/data/multi30k is absent: the Multi30k check is skipped";
  const auto out = work_dir() / "ct2-m30k-export", log = work_dir() / "ct2-m30k-export.log";
  fs::remove_all(out);
  ASSERT_EQ(run({YOKE_BINARY, "export", "--model", m30k.model.string(), "--out", out.string(), "--format", "ctranslate2"},
                log), 0) << slurp(log);
  const fs::path shared = fs::path(YOKE_SHARED_DIR) / "data/multi30k";
  const auto input = work_dir() / "ct2-m30k-test.en", reference = work_dir() / "ct2-m30k-test.de";
  multi30k_head(shared / "test_2016_flickr.en.gz", 1000, input);
  multi30k_head(shared / "test_2016_flickr.de.gz", 1000, reference);
  const auto sentences = read_lines(input.string()), refs = read_lines(reference.string());
  ASSERT_EQ(sentences.size(), 1000u);
  auto yoke_translate = [&](int beam) {
    return lines_of(output_of({YOKE_BINARY, "translate", "--model", m30k.model.string(), "--input", input.string(),
                               "--beam", std::to_string(beam), "--threads", "1"}));
  };
  // Per sentence: the limit yoke_ct2.py gave it and the tokens (without eos) of its translation.
  auto ct2_translate = [&](int beam, const std::string& tag, std::vector<std::pair<int64_t, int64_t>>* lengths,
                           const std::vector<std::string>& extra = {}) {
    const auto len_file = work_dir() / ("ct2-m30k-" + tag + ".lengths");
    std::vector<std::string> args{"translate", out.string(), "--input", input.string(), "--beam", std::to_string(beam),
                                  "--lengths", len_file.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto lines = lines_of(output_of(yoke_ct2(args)));
    if (lengths)
      for (const auto& l : lines_of(slurp(len_file))) {
        std::istringstream s(l);
        int64_t limit = 0, n = 0;
        s >> limit >> n;
        lengths->push_back({limit, n});
      }
    return lines;
  };

  // Greedy: the same argmax at every step, and the same last step at the limit.
  const auto yoke1 = yoke_translate(1), ct2_1 = ct2_translate(1, "b1", nullptr);
  ASSERT_EQ(yoke1.size(), sentences.size());
  ASSERT_EQ(ct2_1.size(), yoke1.size());
  size_t distinct = 0, greedy_same = 0;
  for (size_t i = 0; i < yoke1.size(); ++i) {
    EXPECT_EQ(ct2_1[i], yoke1[i]) << "greedy, line " << i + 1 << ": " << sentences[i];
    greedy_same += ct2_1[i] == yoke1[i];
    distinct += i == 0 || yoke1[i] != yoke1[i - 1];
  }
  EXPECT_GT(distinct, 500u) << "the model translates too few sentences differently to test the search";

  // Beam 4: the same search up to the limit. There yoke forces eos (the hypothesis ends with limit
  // tokens and eos's log-probability), CTranslate2 ends every hypothesis of its last step as it
  // stands (limit tokens, no eos): a sentence whose winner holds `limit` tokens on either side
  // may differ. yoke's token counts come from its search run here (the command's text is checked
  // to be that search's).
  std::vector<std::pair<int64_t, int64_t>> lengths;
  const auto yoke4 = yoke_translate(4), ct2_4 = ct2_translate(4, "b4", &lengths);
  ASSERT_EQ(yoke4.size(), sentences.size());
  ASSERT_EQ(ct2_4.size(), yoke4.size());
  ASSERT_EQ(lengths.size(), yoke4.size());
  auto m = load_model(m30k.model.string());
  std::vector<std::vector<int>> sources;
  for (const auto& s : sentences) sources.push_back(m.src_vocab.encode(s));
  SearchOptions so;
  so.beam = 4;
  const auto ids = translate_ids(*m.model, sources, so, kCpuBatchTokens);
  size_t same = 0, at_limit = 0;
  for (size_t i = 0; i < yoke4.size(); ++i) {
    ASSERT_EQ(m.tgt_vocab.decode(ids[i]), yoke4[i]) << "line " << i + 1;
    // yoke's LengthLimit (decode/search_steps.h) with translate's a = 1.2, b = 10.
    const int64_t limit = std::clamp<int64_t>(int64_t(1.2 * double(sources[i].size() + 1) + 10), 1,
                                              m.config.max_positions - 1);
    ASSERT_EQ(lengths[i].first, limit) << "line " << i + 1;
    same += ct2_4[i] == yoke4[i];
    if (int64_t(ids[i].size()) == limit || lengths[i].second == limit) {
      ++at_limit;
      continue;
    }
    EXPECT_EQ(ct2_4[i], yoke4[i]) << "beam 4, line " << i + 1 << ": " << sentences[i];
  }
  std::cout << "[ ct2      ] Multi30k test_2016_flickr, 1000 sentences: greedy identical " << greedy_same << "/"
            << yoke1.size() << "; beam 4 identical " << same << "/" << yoke4.size() << " (" << at_limit
            << " reach the length limit)" << std::endl;
  EXPECT_LT(at_limit, 100u) << "too few sentences end before the limit to test beam search";

  // int8 (CTranslate2 quantizes the fp32 export when it loads it) against fp32, beam 4.
  const auto int8 = ct2_translate(4, "int8", nullptr, {"--compute-type", "int8"});
  ASSERT_EQ(int8.size(), refs.size());
  const double b32 = corpus_bleu(ct2_4, refs).score, b8 = corpus_bleu(int8, refs).score;
  size_t int8_same = 0;
  for (size_t i = 0; i < int8.size(); ++i) int8_same += ct2_4[i] == int8[i];
  std::cout << "[ ct2      ] beam 4: BLEU fp32 " << b32 << ", int8 " << b8 << " (yoke fp32 " << corpus_bleu(yoke4, refs).score
            << "); int8 keeps " << int8_same << "/1000 translations" << std::endl;
  EXPECT_GT(b32, 5.0) << "the model is not trained enough for the int8 check to mean something";
  YOKE_EXPECT_AT_MOST(std::max(0.0, b32 - b8), 0.3) << "int8 " << b8 << " against fp32 " << b32;
}
