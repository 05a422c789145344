// `yoke export --format hf` in transformers.js (npm's @huggingface/transformers, js/hf_pipeline.js):
// which settings become which architecture and which are refused by name; on small random models
// of every setting it accepts (separate vocabularies too), the logits of a batch within 1e-4 of
// yoke's through the exported graphs (and eos forced after eos); on a small model of the default
// config (separate vocabularies, tie = decoder, pre-norm) trained on Multi30k, pipeline('translation',
// DIR)'s greedy translations of 100 test sentences in batches of 32 are `yoke translate --beam 1`'s
// and its tokenizer's ids are SentencePiece's.
// Skipped, saying why, without node and js/node_modules/@huggingface/transformers (scripts/install-deps.sh),
// without python3-onnx, and (the Multi30k test) without ../shared/data.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>

#include "cli_helpers.h"
#include "config/config.h"
#include "decode/search.h"
#include "export_models.h"
#include "js_tools.h"
#include "margin.h"
#include "multi30k_small.h"
#include "store/hf_export.h"
#include "store/model_export.h"
#include "store/model_store.h"
#include "store/safetensors.h"
#include "text/vocab.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/subprocess.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

#define SKIP_WITHOUT_TRANSFORMERS_JS()                                                 \
  if (const auto why = missing_js_tools("@huggingface/transformers"); !why.empty())    \
  GTEST_SKIP() << why << ": transformers.js not checked"

std::vector<std::string> hf_pipeline(const fs::path& dir, const std::string& command) {
  return {find_on_path("node"), (kJsDir / "hf_pipeline.js").string(), dir.string(), command};
}

// The message hf_architecture refuses `c` with, or "" when it accepts it.
std::string refusal(const Config& c) {
  try {
    hf_architecture(c);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

// yoke's greedy search on one sentence as the model in this process computes it: the smallest gap
// between the best and the second-best logit (pad and bos left out: neither search emits them) over
// the steps that choose the translation and its eos, whether it ended within `limit` tokens, and
// whether the model's best token after that eos is eos again.
struct GreedyPath {
  double smallest_gap = 0;
  bool ended = false, eos_after_eos = false;
};

std::vector<GreedyPath> greedy_paths(const fs::path& model_dir, const std::vector<std::string>& sentences, int limit) {
  const auto m = load_model(model_dir.string());
  SearchOptions opts;
  opts.beam = 1;
  opts.max_len_a = 0;
  opts.max_len_b = limit;
  at::NoGradGuard no_grad;
  std::vector<GreedyPath> paths;
  for (const auto& sentence : sentences) {
    std::vector<int64_t> src_ids;
    for (const int id : m.src_vocab.encode(sentence)) src_ids.push_back(id);
    src_ids.push_back(Vocab::eos);
    const auto src = at::tensor(src_ids, at::kLong).unsqueeze(0);
    const auto hyp = greedy_search(*m.model, src, opts).at(0);
    GreedyPath p;
    p.ended = int(hyp.size()) < limit;
    std::vector<int64_t> tgt_ids{Vocab::bos};
    tgt_ids.insert(tgt_ids.end(), hyp.begin(), hyp.end());
    if (p.ended) tgt_ids.push_back(Vocab::eos);
    auto enc = m.model->encode(src);
    auto logits = m.model->logits(m.model->decode(at::tensor(tgt_ids, at::kLong).unsqueeze(0), &enc))[0].to(at::kDouble);
    logits.select(1, Vocab::pad).fill_(-INFINITY);
    logits.select(1, Vocab::bos).fill_(-INFINITY);
    const int64_t steps = int64_t(hyp.size()) + (p.ended ? 1 : 0);  // rows that chose hyp's tokens and its eos
    const auto top = std::get<0>(logits.narrow(0, 0, steps).topk(2, 1));
    p.smallest_gap = (top.select(1, 0) - top.select(1, 1)).min().item<double>();
    if (p.ended) p.eos_after_eos = logits[steps].argmax().item<int64_t>() == Vocab::eos;
    paths.push_back(p);
  }
  return paths;
}

}  // namespace

TEST(HfExport, TheArchitectureFollowsTheNormAndWhatNeitherComputesIsRefusedByName) {
  Config c;
  for (Tie t : {Tie::none, Tie::decoder, Tie::all, Tie::src_tgt, Tie::shared_private}) {
    c.tie = t;
    c.norm = Norm::post;
    EXPECT_EQ(hf_architecture(c), "marian") << name_of(t);
    c.norm = Norm::pre;
    EXPECT_EQ(hf_architecture(c), "blenderbot") << name_of(t);
  }
  c.arch = Arch::dynamicconv;
  EXPECT_NE(refusal(c).find("arch = dynamicconv"), std::string::npos) << refusal(c);
  c.arch = Arch::transformer;
  c.task = Task::lm;
  EXPECT_NE(refusal(c).find("task = lm"), std::string::npos) << refusal(c);
}

// Every setting of export_models.h that an architecture computes, post-norm twins of some, and
// separate vocabularies: written by python/yoke_hf.py (one process for all, the architecture
// hf_architecture chooses; the command itself runs in the tests below), run by transformers.js's
// AutoModelForSeq2SeqLM (one encoder and one decoder call with an empty cache: the causal mask
// over a whole prefix; the Multi30k test runs the cached steps). Where the architecture's one input
// table holds two of yoke's (separate vocabularies; Blenderbot with tie none, decoder or
// shared-private), the target's ids start after the source's rows and no source row is ever a logit.
TEST(HfExport, EverySettingGivesYokesLogitsInTransformersJs) {
  SKIP_WITHOUT_TRANSFORMERS_JS();
  struct Case {
    Setting setting;
    bool separate = false;
  };
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
  cases.push_back({post("post-decoder-l2", [](Config& c) { c.tie = Tie::decoder, c.output = Estimator::l2; })});
  cases.push_back({post("post-srctgt-distance-learned",
                        [](Config& c) { c.tie = Tie::src_tgt, c.output = Estimator::distance, c.positions = Positions::learned; })});
  cases.push_back({{"sep-decoder-dot", [](Config& c) { c.tie = Tie::decoder; }}, true});  // the default config
  cases.push_back({post("sep-post-none-square", [](Config& c) { c.tie = Tie::none, c.output = Estimator::square; }), true});
  cases.push_back({{"sep-sharedprivate-l2", [](Config& c) { c.tie = Tie::shared_private, c.output = Estimator::l2; }}, true});
  ASSERT_GE(cases.size(), 14u);
  std::string export_cmd = std::string(YOKE_PYTHON) + " " + YOKE_SOURCE_DIR + "/python/yoke_hf.py";
  std::map<std::string, at::Tensor> expected;
  std::map<std::string, int64_t> source_rows;
  for (const auto& k : cases) {
    const auto& s = k.setting;
    const auto dir = k.separate ? model_dir(s, separate_data().data, separate_data().pairs) : model_dir(s);
    const auto st = work_dir() / ("hf-st-" + s.name), out = work_dir() / ("hf-" + s.name);
    fs::remove_all(st);
    fs::remove_all(out);
    export_model(dir.string(), st.string());
    auto m = load_model(st.string());
    auto [src, tgt] = parity_batch(std::min(m.config.src_vocab_size, m.config.tgt_vocab_size), 5);
    tgt[1][4] = Vocab::eos;  // an input eos within a row: its logits are forced (below), the rest are the model's
    at::NoGradGuard no_grad;
    auto enc = m.model->encode(src);
    expected[s.name] = m.model->logits(m.model->decode(tgt, &enc));
    source_rows[s.name] = m.config.src_vocab_size;
    SafeTensors in;
    in.tensors = {{"src", src}, {"tgt_in", tgt}};
    save_safetensors((work_dir() / ("hf-" + s.name + "-in.safetensors")).string(), in);
    export_cmd += " " + hf_architecture(m.config) + " '" + st.string() + "' '" + out.string() + "'";
  }
  const auto log = work_dir() / "hf-export.log";
  ASSERT_EQ(std::system((export_cmd + " 2>'" + log.string() + "'").c_str()), 0) << slurp(log);
  size_t tied = 0, two_tables = 0;
  for (const auto& k : cases) {
    const auto& s = k.setting;
    const auto out = work_dir() / ("hf-" + s.name);
    const auto config = read_json((out / "config.json").string());
    Config c;
    s.set(c);
    EXPECT_EQ(config.at("model_type"), c.norm == Norm::post ? "marian" : "blenderbot") << s.name;
    for (const char* f : {"model.safetensors", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                          "onnx/encoder_model.onnx", "onnx/decoder_model_merged.onnx"})
      EXPECT_TRUE(fs::exists(out / f)) << s.name << ": " << f;
    // lm_head is the decoder's input embedding exactly when the estimator's output rows are the rows
    // its inputs read: dot (and l2, whose inputs are normalized too) on a matrix the decoder's input
    // and the output share.
    const bool same_matrix = c.tie == Tie::all || c.tie == Tie::decoder || c.tie == Tie::shared_private,
               same_rows = c.output == Estimator::dot || c.output == Estimator::l2;
    EXPECT_EQ(config.at("tie_word_embeddings").get<bool>(), same_matrix && same_rows) << s.name;
    tied += config.at("tie_word_embeddings").get<bool>();
    // Two tables in one: the source's rows first, then the target's.
    const auto& e = expected.at(s.name);
    const int64_t target_vocab = e.size(2);
    const bool two = k.separate || (c.norm == Norm::pre && c.tie != Tie::all && c.tie != Tie::src_tgt);
    const int64_t first = two ? source_rows.at(s.name) : 0;
    two_tables += two;
    EXPECT_EQ(config.at("vocab_size").get<int64_t>(), first + target_vocab) << s.name;
    EXPECT_EQ(config.at("eos_token_id").get<int64_t>(), first + Vocab::eos) << s.name;
    EXPECT_EQ(config.at("decoder_start_token_id").get<int64_t>(), first + Vocab::bos) << s.name;

    const auto in = work_dir() / ("hf-" + s.name + "-in.safetensors");
    auto batch = load_safetensors(in.string());
    batch.tensors.at("tgt_in") += first;
    save_safetensors(in.string(), batch);
    auto args = hf_pipeline(out, "logits");
    args.push_back(in.string());
    args.push_back((work_dir() / ("hf-" + s.name + "-out.safetensors")).string());
    ASSERT_EQ(run(args, log), 0) << s.name << "\n" << slurp(log);
    const auto all = load_safetensors(args.back()).tensors.at("logits");
    ASSERT_EQ(all.size(2), first + target_vocab) << s.name;
    if (first) EXPECT_TRUE(all.narrow(2, 0, first).eq(-INFINITY).all().item<bool>()) << s.name << ": a source row's logit";
    auto got = all.narrow(2, first, target_vocab).clone();
    auto want = e.clone();
    ASSERT_EQ(got.sizes(), want.sizes()) << s.name;
    // After an input eos the decoder graph puts everything on eos (0 for eos, −inf for the rest:
    // transformers.js feeds a finished row back, python/yoke_hf.py's DecoderGraph); the model's
    // logits everywhere else.
    auto after_eos = at::full({target_vocab}, -INFINITY, got.options());
    after_eos[Vocab::eos] = 0.0f;
    EXPECT_TRUE(at::equal(got[1][4], after_eos)) << s.name << ": the logits after an input eos";
    got[1][4].zero_();
    want[1][4].zero_();
    // fp32 on both sides in other operation orders (the estimator folded into lm_head, k|v split,
    // ORT's kernels): the same bound as the ONNX export's (test_onnx.cpp).
    YOKE_EXPECT_AT_MOST((got - want).abs().max().item<double>(), 1e-4) << s.name;
  }
  EXPECT_GE(tied, 2u) << "no setting checked the tied declaration";
  EXPECT_GE(two_tables, 4u) << "too few settings checked the two tables in one";
}

// What neither architecture computes is refused before anything is written, naming the setting: a
// language model.
TEST(HfExport, ASettingNeitherArchitectureComputesIsRefusedAndLeavesNothingBehind) {
  const auto out = work_dir() / "hf-refused", log = work_dir() / "hf-refused.log";
  const auto lm = model_dir({"hf-refused-lm", [](Config& c) { c.task = Task::lm; }});
  EXPECT_EQ(run({YOKE_BINARY, "export", "--model", lm.string(), "--out", out.string(), "--format", "hf"}, log), 2);
  EXPECT_NE(slurp(log).find("task = lm"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(work_dir()))
    EXPECT_EQ(e.path().filename().string().find(".hf-refused.partial"), std::string::npos) << e.path();
}

namespace {

// A Multi30k model of multi30k_small.h exported to `out`, as a transformers.js user runs it: its
// tokenizer's ids are SentencePiece's (`spm`, the source's model) with eos, and pipeline('translation')'s
// greedy translations of 100 test sentences in batches of 32, whose rows end at different steps,
// are `yoke translate --beam 1`'s. At least `writes_on` lines must end where the model would not
// go on predicting eos, so that a batch's finished rows writing on after their end would show
// (transformers.js's generate() keeps no record of finished rows; python/yoke_hf.py's DecoderGraph
// forces eos after eos).
void expect_pipeline_is_yokes_greedy(const Multi30kSmall& m30k, const fs::path& out, const std::string& spm,
                                     double writes_on_at_least) {
  const auto log = out.string() + ".log";
  fs::remove_all(out);
  ASSERT_EQ(run({YOKE_BINARY, "export", "--model", m30k.model.string(), "--out", out.string(), "--format", "hf"}, log), 0)
      << slurp(log);
  EXPECT_EQ(read_json((out / "config.json").string()).at("model_type"), "blenderbot");
  const std::string input = m30k.test_source().string();
  const auto sentences = read_lines(input);
  ASSERT_EQ(sentences.size(), 100u);

  // The tokenizer (tokenizer.json in @huggingface/tokenizers) against SentencePiece, eos added.
  auto encode = hf_pipeline(out, "encode");
  encode.insert(encode.end(), {"--input", input});
  const auto ids = lines_of(output_of(encode));
  ASSERT_EQ(ids.size(), sentences.size());
  const auto vocab = Vocab::load((m30k.data / spm).string());
  for (size_t i = 0; i < sentences.size(); ++i) {
    std::string expected;
    for (int id : vocab.encode(sentences[i])) expected += std::to_string(id) + " ";
    EXPECT_EQ(ids[i], expected + std::to_string(Vocab::eos)) << "line " << i + 1 << ": " << sentences[i];
  }

  // Greedy search with one length limit on both sides: yoke's a·|x| + b per sentence is not a
  // setting transformers.js has, so yoke gets b = 64, a = 0 and transformers.js max_new_tokens = 64.
  const int limit = 64;
  const auto paths = greedy_paths(m30k.model, sentences, limit);
  size_t writes_on = 0;
  for (const auto& p : paths) writes_on += p.ended && !p.eos_after_eos;
  if (writes_on_at_least > 0)
    YOKE_EXPECT_AT_LEAST(double(writes_on), writes_on_at_least) << "lines whose model does not predict eos after their eos";

  const auto yoke = lines_of(output_of({YOKE_BINARY, "translate", "--model", m30k.model.string(), "--input", input,
                                        "--beam", "1", "--threads", "1", "--max-len-a", "0", "--max-len-b",
                                        std::to_string(limit)}));
  auto translate = hf_pipeline(out, "translate");
  translate.insert(translate.end(), {"--input", input, "--max-new-tokens", std::to_string(limit), "--batch", "32"});
  const auto js = lines_of(output_of(translate));
  ASSERT_EQ(yoke.size(), 100u);
  ASSERT_EQ(js.size(), yoke.size());
  // Line for line where no step is a near tie: both sides' logits are within 1e-4 of the model's
  // (the test above; measured 3e-6), so a gap of 1e-3 between the best two tokens cannot flip.
  // Measured (tie = src-tgt): the smallest gaps 1e-5 and 6e-4, 98 lines compared; 100 of 100 lines
  // equal, 0 of 100 with an export whose graph does not force eos after eos. The default config's:
  // 94 lines compared, all equal.
  size_t distinct = 0, compared = 0;
  for (size_t i = 0; i < yoke.size(); ++i) {
    distinct += i == 0 || yoke[i] != yoke[i - 1];
    if (paths[i].smallest_gap < 1e-3) continue;
    ++compared;
    EXPECT_EQ(js[i], yoke[i]) << "line " << i + 1 << " (batch " << i / 32 + 1 << ")";
  }
  YOKE_EXPECT_SHORTFALL(double(compared), 80.0, 100.0) << compared << " lines without a near tie";
  EXPECT_GT(distinct, 50u) << "the model translates too few sentences differently to test the search";
}

}  // namespace

// Pre-norm with tie = src-tgt (Blenderbot, one table): weakly trained, it does not go on predicting
// eos after eos on 97 of 100 lines (a tied output does: tie = all or decoder hid the bug).
TEST(HfExport, Multi30kPipelineTranslatesBatchesAsYokesGreedySearch) {
  SKIP_WITHOUT_TRANSFORMERS_JS();
  const auto m30k = multi30k_small_model("hf-m30k", {"--tie", "src-tgt"});
  if (m30k.model.empty()) GTEST_SKIP() << YOKE_SHARED_DIR << "/data/multi30k is absent: the Multi30k check is skipped";
  expect_pipeline_is_yokes_greedy(m30k, work_dir() / "hf-m30k-export", "spm.model", 30.0);
}

// The default config (separate vocabularies of 1000, tie = decoder, pre-norm): Blenderbot with the
// source's and the target's tables in one, the tokenizer's target pieces marked. Its tied output
// predicts eos after eos on most lines (10 of 100 would write on, measured), so the batch check
// above is the sensitive one; this one checks the two tables and the marked pieces on real text.
TEST(HfExport, TheDefaultConfigTranslatesInThePipelineAsYokesGreedySearch) {
  SKIP_WITHOUT_TRANSFORMERS_JS();
  const auto m30k = multi30k_small_model("hf-m30k-sep", {}, /*joint=*/false);
  if (m30k.model.empty()) GTEST_SKIP() << YOKE_SHARED_DIR << "/data/multi30k is absent: the Multi30k check is skipped";
  const auto out = work_dir() / "hf-m30k-sep-export";
  expect_pipeline_is_yokes_greedy(m30k, out, "spm.src.model", 0);
  const auto config = read_json((out / "config.json").string());
  EXPECT_EQ(config.at("vocab_size"), 2000) << "1000 source rows, then 1000 target rows";
  EXPECT_EQ(config.at("eos_token_id"), 1000 + Vocab::eos);
}
