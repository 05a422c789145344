// `yoke export --format onnx` in ONNX Runtime (node, js/): on small random models of every
// translation setting, the logits of a batch within 1e-4 of yoke's and the same greedy and beam-4
// searches; on a small model trained on Multi30k, the same greedy and beam-4 translations of 100
// test sentences as `yoke translate`, and js/spm_bpe.js encoding them as SentencePiece does.
// Skipped, saying why, without node and js/node_modules (cd js && npm ci), without python3-onnx,
// and (the second) without ../shared/data.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli_helpers.h"
#include "decode/search.h"
#include "export_models.h"
#include "store/model_export.h"
#include "store/model_store.h"
#include "store/safetensors.h"
#include "text/corpus.h"
#include "text/prepare.h"
#include "text/vocab.h"
#include "util/subprocess.h"
#include "js_tools.h"
#include "margin.h"
#include "multi30k_small.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

#define SKIP_WITHOUT_ONNX_TOOLS()                                                      \
  if (const auto why = missing_js_tools("onnxruntime-node"); !why.empty()) GTEST_SKIP() << why << ": ONNX Runtime not checked"

std::string node(const std::string& script) { return find_on_path("node") + " " + (kJsDir / script).string(); }

std::vector<std::vector<int>> padded_rows(const at::Tensor& t) {
  std::vector<std::vector<int>> out(size_t(t.size(0)));
  for (int64_t i = 0; i < t.size(0); ++i)
    for (int64_t j = 0; j < t.size(1) && t[i][j].item<int64_t>() >= 0; ++j) out[size_t(i)].push_back(int(t[i][j].item<int64_t>()));
  return out;
}

struct Expected {
  at::Tensor logits;
  std::vector<std::vector<int>> greedy, beam;
};

// Every translation setting of export_models.h: exported by python/yoke_onnx.py (one process for
// all, checked by the ONNX checker), run by js/parity.js in onnxruntime-node (one process for all).
TEST(OnnxExport, EveryTranslationSettingGivesYokesLogitsAndSearchesInOnnxRuntime) {
  SKIP_WITHOUT_ONNX_TOOLS();
  SearchOptions opts;
  opts.max_len_a = 1.5;
  opts.max_len_b = 4;
  std::map<std::string, Expected> expected;
  std::string export_cmd = std::string(YOKE_PYTHON) + " " + YOKE_SOURCE_DIR + "/python/yoke_onnx.py";
  std::string parity_cmd = node("parity.js");
  for (const auto& s : settings()) {
    if (s.name.rfind("lm-", 0) == 0) continue;  // language models are not exported to ONNX
    const auto st = work_dir() / ("onnx-st-" + s.name), out = work_dir() / ("onnx-" + s.name);
    fs::remove_all(st);
    fs::remove_all(out);
    export_model(model_dir(s).string(), st.string());
    auto m = load_model(st.string());
    auto [src, tgt] = parity_batch(m.config.tgt_vocab_size, 5);
    at::NoGradGuard no_grad;
    auto enc = m.model->encode(src);
    Expected e;
    e.logits = m.model->logits(m.model->decode(tgt, &enc));
    opts.beam = 1;
    e.greedy = greedy_search(*m.model, src, opts);
    opts.beam = 4;
    e.beam = beam_search(*m.model, src, opts);
    expected[out.string()] = e;
    fs::create_directories(out);
    SafeTensors in;
    in.tensors = {{"src", src}, {"tgt_in", tgt}};
    in.metadata = {{"max_len_a", "1.5"}, {"max_len_b", "4"}, {"beam", "4"}};
    save_safetensors((out / "onnx_inputs.safetensors").string(), in);
    export_cmd += " '" + st.string() + "' '" + out.string() + "'";
    parity_cmd += " '" + out.string() + "'";
  }
  const auto log = work_dir() / "onnx-export.log";
  ASSERT_EQ(std::system((export_cmd + " 2>'" + log.string() + "'").c_str()), 0) << slurp(log);
  ASSERT_EQ(std::system((parity_cmd + " 2>'" + log.string() + "'").c_str()), 0) << slurp(log);
  for (const auto& [dir, e] : expected) {
    const auto got = load_safetensors((fs::path(dir) / "onnx_outputs.safetensors").string());
    // fp32 on both sides with other operation orders (ORT's fused kernels, a cached step against
    // a whole prefix): measured against python/yoke_torch.py, at most 5e-6; 1e-4 is the bound.
    const double diff = (got.tensors.at("logits") - e.logits).abs().max().item<double>();
    YOKE_EXPECT_AT_MOST(diff, 1e-4) << dir;
    EXPECT_EQ(padded_rows(got.tensors.at("greedy")), e.greedy) << dir;
    EXPECT_EQ(padded_rows(got.tensors.at("beam")), e.beam) << dir;
  }
}

// The small Multi30k model of multi30k_small.h: translations with some structure, so that the
// searches meet real near-ties and varied lengths rather than one repeated token.
TEST(OnnxCli, Multi30kGreedyAndBeam4TranslationsAreYokesAndSentencePieceInJsEncodesAsSentencePiece) {
  SKIP_WITHOUT_ONNX_TOOLS();
  const auto m30k = multi30k_small_model("m30k");
  if (m30k.model.empty()) GTEST_SKIP() << YOKE_SHARED_DIR << "/data/multi30k is absent: the Multi30k ONNX check is skipped";
  const fs::path model = m30k.model;
  const auto onnx = work_dir() / "m30k-onnx", log = work_dir() / "m30k-onnx.log";
  fs::remove_all(onnx);
  ASSERT_EQ(run({YOKE_BINARY, "export", "--model", model.string(), "--out", onnx.string(), "--format", "onnx"}, log), 0)
      << slurp(log);
  EXPECT_NE(slurp(log).find("decoder.onnx"), std::string::npos) << slurp(log);
  for (const char* f : {"encoder.onnx", "onnx.json", "vocab.src.json", "vocab.tgt.json", "spm.model"})
    EXPECT_TRUE(fs::exists(onnx / f)) << f;
  // Without an interpreter that has the packages: refused before any work, naming them.
  {
    const ScopedEnv python("YOKE_PYTHON", "/nonexistent/python3");
    ASSERT_TRUE(python.set());
    EXPECT_EQ(run({YOKE_BINARY, "export", "--model", model.string(), "--out", (work_dir() / "m30k-x").string(), "--format",
                   "onnx"}, log), 2);
  }
  EXPECT_NE(slurp(log).find("python3-torch python3-onnx python3-sentencepiece"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(work_dir() / "m30k-x"));

  const std::string input = m30k.test_source().string();
  // SentencePiece in JS against SentencePiece itself.
  const auto vocab = Vocab::load((m30k.data / "spm.model").string());
  const auto js_ids = lines_of(output_of({find_on_path("node"), (kJsDir / "translate.js").string(), onnx.string(),
                                          "--encode", "--input", input}));
  const auto sentences = read_lines(input);
  ASSERT_EQ(js_ids.size(), sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    std::string ids;
    for (int id : vocab.encode(sentences[i])) ids += (ids.empty() ? "" : " ") + std::to_string(id);
    EXPECT_EQ(js_ids[i], ids) << "line " << i + 1 << ": " << sentences[i];
  }
  for (const char* beam : {"1", "4"}) {
    const auto yoke = lines_of(output_of({YOKE_BINARY, "translate", "--model", model.string(), "--input", input,
                                          "--beam", beam, "--threads", "1"}));
    const auto ort = lines_of(output_of({find_on_path("node"), (kJsDir / "translate.js").string(), onnx.string(),
                                         "--input", input, "--beam", beam, "--batch", "32"}));
    ASSERT_EQ(yoke.size(), 100u);
    ASSERT_EQ(ort.size(), yoke.size()) << "beam " << beam;
    size_t distinct = 0;
    for (size_t i = 0; i < yoke.size(); ++i) {
      EXPECT_EQ(ort[i], yoke[i]) << "beam " << beam << ", line " << i + 1;
      distinct += i == 0 || yoke[i] != yoke[i - 1];
    }
    EXPECT_GT(distinct, 50u) << "the model translates too few sentences differently to test the search";
  }
}

}  // namespace

// A language model is refused before the exporter runs, and the refusal leaves no folder behind
// (the export is staged beside --out and renamed into place only when whole).
TEST(OnnxCli, ALanguageModelIsRefusedAndLeavesNothingBehind) {
  SKIP_WITHOUT_ONNX_TOOLS();
  const fs::path lm = train_into("onnx-lm", [](const fs::path& d) {
    auto args = tiny_train_args(d, 2, 1);
    for (const char* a : {"--task", "lm", "--valid_bleu", "false"}) args.push_back(a);
    return args;
  });
  const auto out = work_dir() / "onnx-lm-out", log = work_dir() / "onnx-lm-out.log";
  EXPECT_EQ(run({YOKE_BINARY, "export", "--model", lm.string(), "--out", out.string(), "--format", "onnx"}, log), 2);
  EXPECT_NE(slurp(log).find("is a language model; the ONNX export covers translation models"), std::string::npos)
      << slurp(log);
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(work_dir()))
    EXPECT_EQ(e.path().filename().string().find(".onnx-lm-out.partial"), std::string::npos) << e.path();
}

// js/translate.js answers --help with its usage, and refuses an option it does not know or a value
// that is not a number (which parseInt would have turned into NaN), naming it.
TEST(OnnxCli, TranslateJsHasHelpAndRefusesBadValues) {
  SKIP_WITHOUT_ONNX_TOOLS();
  const std::string help = output_of({find_on_path("node"), (kJsDir / "translate.js").string(), "--help"});
  EXPECT_EQ(help.rfind("usage: node js/translate.js MODEL_DIR [options]", 0), 0u) << help;
  EXPECT_NE(help.find("--beam N"), std::string::npos) << help;
  const auto log = work_dir() / "translate-js.log";
  EXPECT_EQ(run({find_on_path("node"), (kJsDir / "translate.js").string(), "m", "--beam", "q"}, log), 1);
  EXPECT_NE(slurp(log).find("--beam expects a whole number, got 'q'"), std::string::npos) << slurp(log);
  EXPECT_EQ(run({find_on_path("node"), (kJsDir / "translate.js").string(), "m", "--bogus"}, log), 1);
  EXPECT_NE(slurp(log).find("unknown option --bogus (see --help)"), std::string::npos) << slurp(log);
}
