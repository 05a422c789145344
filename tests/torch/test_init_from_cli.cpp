// Fine-tuning from a trained model (init_from): the run starts from the model's weights (its
// validation loss, not a fresh model's) with a fresh optimizer and schedule, says where it
// started in the log and metrics.jsonl, and refuses what it cannot start from with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "text/binarized.h"
#include "text/vocab.h"
#include "margin.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

// The first model: 60 updates on data_dir(), tie all with the cosine estimator (not the default
// scheme, so that more than one matrix layout travels), made once per process.
std::vector<std::string> first_args(const fs::path& save_dir, int max_updates) {
  auto args = tiny_train_args(save_dir, max_updates, 5);
  for (const char* a : {"--tie", "all", "--output", "cosine", "--lr", "5e-3"}) args.push_back(a);
  return args;
}

const fs::path& first_model() {
  static const fs::path dir = train_into("init-first", [](const fs::path& d) { return first_args(d, 60); });
  return dir;
}

// A second data set with the first one's vocabulary, as a user makes it: `yoke prepare --vocab-from`
// the first model's directory, on other training sentences (another seed of the synthetic language)
// and data_dir()'s validation text, so that validation losses of the two runs compare.
const fs::path& second_corpus() {
  static const fs::path corpus = [] {
    const auto dir = work_dir() / "corpus-second";
    SyntheticOptions so;
    so.train = 300;
    so.valid = 5;
    so.test = 5;
    so.seed = 8;
    write_synthetic_corpus(dir.string(), so);
    return dir;
  }();
  return corpus;
}

std::vector<std::string> prepare_args(const fs::path& vocab_from, const fs::path& train_src, const fs::path& train_tgt,
                                      const fs::path& out) {
  return {YOKE_BINARY, "prepare", "--vocab-from", vocab_from.string(), "--train-src", train_src.string(),
          "--train-tgt", train_tgt.string(), "--valid-src", (data_dir() / "valid.src.txt").string(),
          "--valid-tgt", (data_dir() / "valid.tgt.txt").string(), "--out", out.string()};
}

const fs::path& second_data() {
  static const fs::path data = [] {
    const auto out = work_dir() / "data-second", log = work_dir() / "data-second.log";
    EXPECT_EQ(run(prepare_args(first_model(), second_corpus() / "train.src", second_corpus() / "train.tgt", out), log), 0)
        << slurp(log);
    return out;
  }();
  return data;
}

std::vector<nlohmann::json> records(const fs::path& save_dir, const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& l : lines_of(slurp(save_dir / "metrics.jsonl"))) {
    auto j = nlohmann::json::parse(l);
    if (j.at("type") == type) out.push_back(j);
  }
  return out;
}

// One update on the second data set at a learning rate too small to move the weights, then a
// validation: what the run starts from, measured.
std::vector<std::string> second_args(const fs::path& save_dir, const std::vector<std::string>& more) {
  auto args = first_args(save_dir, 1);
  for (const char* a : {"--valid_interval", "1", "--lr", "1e-9"}) args.push_back(a);
  args.insert(args.end(), more.begin(), more.end());
  args[3] = second_data().string();  // --data
  return args;
}

}  // namespace

TEST(InitFrom, FineTuningStartsAtTheFirstModelsValidationLossNotAFreshModels) {
  ASSERT_EQ(tiny_train_args("x", 1, 1)[2], "--data");
  const auto last = first_model() / "checkpoint_last.ykp";
  const double first_loss = records(first_model(), "valid").back().at("loss").get<double>();
  ASSERT_EQ(records(first_model(), "valid").back().at("update"), 60);

  const auto tuned = work_dir() / "init-tuned", fresh = work_dir() / "init-fresh";
  const auto log = work_dir() / "init-tuned.log";
  ASSERT_EQ(run(second_args(tuned, {"--init_from", last.string()}), log), 0) << slurp(log);
  ASSERT_EQ(run(second_args(fresh, {}), work_dir() / "init-fresh.log"), 0) << slurp(work_dir() / "init-fresh.log");
  const double tuned_loss = records(tuned, "valid").front().at("loss").get<double>();
  const double fresh_loss = records(fresh, "valid").front().at("loss").get<double>();
  // The same weights on the same validation set, one Adam step of at most ~lr = 1e-9 per weight
  // apart: equal up to float summation noise (1e-3 bits is far above it and far below the gap).
  YOKE_EXPECT_NEAR(tuned_loss, first_loss, 1e-3);
  // And the trained start is not a fresh one: half a nat per token is 500 times the tolerance
  // above, and a quarter of the gap measured (~1.9 nats after 60 updates).
  YOKE_EXPECT_AT_LEAST(fresh_loss - first_loss, 0.5) << "a fresh model should be far worse than the trained one";

  // Where it started, in the log and in metrics.jsonl; its own schedule (update 1, not 31).
  EXPECT_NE(slurp(log).find("init_from: starting from the weights of " + last.string() + " (update 60"),
            std::string::npos) << slurp(log);
  const auto start = records(tuned, "start").front();
  EXPECT_EQ(start.at("init_from").at("checkpoint"), last.string());
  EXPECT_EQ(start.at("init_from").at("update"), 60);
  EXPECT_TRUE(records(fresh, "start").front().at("init_from").is_null());
  EXPECT_EQ(records(tuned, "end").front().at("update"), 1);
  EXPECT_TRUE(fs::exists(tuned / "spm.model"));

  // A directory gives its checkpoint_best.ykp; the run then resumes itself, init_from ignored.
  const auto by_dir = work_dir() / "init-by-dir";
  ASSERT_EQ(run(second_args(by_dir, {"--init_from", first_model().string()}), log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("starting from the weights of " + (first_model() / "checkpoint_best.ykp").string()),
            std::string::npos) << slurp(log);
  auto more = second_args(by_dir, {"--init_from", first_model().string()});
  more[std::find(more.begin(), more.end(), "--max_updates") - more.begin() + 1] = "2";
  ASSERT_EQ(run(more, log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("resumed from"), std::string::npos) << slurp(log);
  EXPECT_EQ(slurp(log).find("init_from: starting"), std::string::npos) << slurp(log);
}

TEST(InitFrom, RefusesOtherVocabulariesInt8ModelsChangedModelKeysAndItsOwnSaveDir) {
  const auto log = work_dir() / "init-refused.log";
  // Another vocabulary of the same size: both files named.
  const auto unigram = work_dir() / "data-init-unigram";
  {
    auto p = synthetic_prepare_options((work_dir() / "corpus").string(), unigram.string());
    data_dir();  // writes the corpus
    p.vocab_size = 200;
    p.model_type = "unigram";
    std::ostringstream plog;
    prepare_data(p, plog);
  }
  auto args = second_args(work_dir() / "init-refused", {"--init_from", first_model().string()});
  args[3] = unigram.string();
  EXPECT_EQ(run(args, log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find((unigram / "spm.model").string() + ": is not the vocabulary of the model init_from starts "
                            "from, " + (first_model() / "spm.model").string()),
            std::string::npos) << slurp(log);

  // A key that defines the model.
  EXPECT_EQ(run(second_args(work_dir() / "init-refused", {"--init_from", first_model().string(), "--heads", "4"}), log), 2);
  EXPECT_NE(slurp(log).find("keys that define the model: heads 2 → 4"), std::string::npos) << slurp(log);

  // An int8 model.
  const auto int8 = work_dir() / "init-first-int8";
  ASSERT_EQ(run({YOKE_BINARY, "quantize", "--model", first_model().string(), "--out", int8.string()}, log), 0) << slurp(log);
  EXPECT_EQ(run(second_args(work_dir() / "init-refused", {"--init_from", int8.string()}), log), 2);
  EXPECT_NE(slurp(log).find("is an int8 model"), std::string::npos) << slurp(log);

  // Its own save_dir, and a path that is not there.
  const auto own = work_dir() / "init-own";
  fs::create_directories(own);
  fs::copy_file(first_model() / "checkpoint_best.ykp", own / "checkpoint_best.ykp");
  EXPECT_EQ(run(second_args(own, {"--init_from", own.string()}), log), 2);
  EXPECT_NE(slurp(log).find("init_from names this run's own save_dir"), std::string::npos) << slurp(log);
  EXPECT_EQ(run(second_args(own, {"--init_from", (work_dir() / "nowhere").string()}), log), 2);
  EXPECT_NE(slurp(log).find("nowhere: init_from: no such model directory"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(work_dir() / "init-refused" / "checkpoint_last.ykp"));
}

// `prepare --vocab-from` copies the model's SentencePiece file byte for byte (which is what lets
// init_from accept the data, above) and refuses what the model could not read.
TEST(VocabFrom, CopiesTheModelsVocabularyAndRefusesWhatItCannotUse) {
  EXPECT_EQ(slurp(second_data() / "spm.model"), slurp(first_model() / "spm.model"));
  const auto meta = nlohmann::json::parse(slurp(second_data() / "meta.json"));
  EXPECT_EQ(meta.at("vocab_from"), first_model().string());
  EXPECT_TRUE(meta.at("joint").get<bool>());  // taken from the model: no --joint was given
  const auto src = second_corpus() / "train.src", tgt = second_corpus() / "train.tgt";
  const auto log = work_dir() / "vocab-from-refused.log";
  // A vocabulary size has no meaning when the vocabulary is copied.
  auto sized = prepare_args(first_model(), src, tgt, work_dir() / "vf-sized");
  sized.insert(sized.end(), {"--vocab-size", "100"});
  EXPECT_EQ(run(sized, log), 2);
  EXPECT_NE(slurp(log).find("--vocab-from excludes --vocab-size"), std::string::npos) << slurp(log);
  // Separate vocabularies asked to be joint, and one side missing.
  const auto separate = work_dir() / "vf-separate";
  fs::create_directories(separate);
  fs::copy_file(first_model() / "spm.model", separate / "spm.src.model", fs::copy_options::overwrite_existing);
  EXPECT_EQ(run(prepare_args(separate, src, tgt, work_dir() / "vf-one-side"), log), 2);
  EXPECT_NE(slurp(log).find("has spm.src.model without its other side"), std::string::npos) << slurp(log);
  fs::copy_file(first_model() / "spm.model", separate / "spm.tgt.model", fs::copy_options::overwrite_existing);
  auto joint = prepare_args(separate, src, tgt, work_dir() / "vf-joint");
  joint.push_back("--joint");
  EXPECT_EQ(run(joint, log), 2);
  EXPECT_NE(slurp(log).find("and --joint asks for one: drop --joint"), std::string::npos) << slurp(log);
  // A model directory whose spm.model is not the one its checkpoint was trained with.
  const auto swapped = work_dir() / "vf-swapped";
  fs::create_directories(swapped);
  fs::copy_file(first_model() / "checkpoint_best.ykp", swapped / "checkpoint_best.ykp", fs::copy_options::overwrite_existing);
  {
    std::ofstream f(swapped / "spm.model", std::ios::binary);
    f << "not the model's vocabulary";
  }
  EXPECT_EQ(run(prepare_args(swapped, src, tgt, work_dir() / "vf-swapped-data"), log), 2);
  EXPECT_NE(slurp(log).find((swapped / "spm.model").string() + ": --vocab-from: is not the vocabulary"),
            std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(work_dir() / "vf-swapped-data"));
}

// A back-translation round on tiny data, as docs/export.md describes it: sample translations of
// monolingual text with the model (`translate --sampling`), pair them with the text, prepare that
// with the model's vocabulary, and go on training from the model.
TEST(VocabFrom, ABackTranslationRoundRunsEndToEnd) {
  const auto mono = second_corpus() / "train.tgt";
  const auto sampled = work_dir() / "bt.sampled", log = work_dir() / "bt.log";
  {
    const auto text = output_of({YOKE_BINARY, "translate", "--model", first_model().string(), "--input", mono.string(),
                                 "--sampling", "topk", "--sampling-topk", "5", "--seed", "3"});
    std::ofstream(sampled) << text;
  }
  ASSERT_EQ(lines_of(slurp(sampled)).size(), lines_of(slurp(mono)).size());
  const auto bt_data = work_dir() / "data-bt";
  ASSERT_EQ(run(prepare_args(first_model(), sampled, mono, bt_data), log), 0) << slurp(log);
  auto args = second_args(work_dir() / "bt-tuned", {"--init_from", first_model().string()});
  args[3] = bt_data.string();
  ASSERT_EQ(run(args, log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("init_from: starting from the weights of"), std::string::npos) << slurp(log);
}
