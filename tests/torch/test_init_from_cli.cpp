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

// A second data set with the first one's vocabulary: other training sentences (another seed of
// the synthetic language), encoded with data_dir()'s spm.model; the same validation set, so that
// validation losses of the two runs compare.
const fs::path& second_data() {
  static const fs::path data = [] {
    const auto corpus = work_dir() / "corpus-second", out = work_dir() / "data-second";
    SyntheticOptions so;
    so.train = 300;
    so.valid = 5;
    so.test = 5;
    so.seed = 8;
    write_synthetic_corpus(corpus.string(), so);
    fs::create_directories(out);
    for (const auto& e : fs::directory_iterator(data_dir()))
      if (e.path().filename() != "train.bin") fs::copy_file(e.path(), out / e.path().filename(), fs::copy_options::overwrite_existing);
    const Vocab vocab = Vocab::load((data_dir() / "spm.model").string());
    const auto src = lines_of(slurp(corpus / "train.src")), tgt = lines_of(slurp(corpus / "train.tgt"));
    TokenizedCorpus c;
    for (size_t i = 0; i < src.size(); ++i) c.add(vocab.encode(src[i]), vocab.encode(tgt[i]));
    save_binarized((out / "train.bin").string(), c);
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
