// report/run_result: result.json's one mapping, read and written.
#include "report/run_result.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace {

// A translation run's and a language model's result.json, as the runner has written them (the
// fields of the committed folders under docs/results/, values shortened).
const char* kTranslation = R"({
  "analysis": {"estimator": "dot"}, "checkpoint": "best", "config": {"d_model": 128},
  "emb": 3072000, "emb_fraction": 0.768, "params": 4000000, "red": 0.0, "seed": 1,
  "stop_reason": "early stopping", "tokens_per_s": 122000.5, "updates": 3200, "variant": "vanilla",
  "wall_s": 249.25,
  "tests": {"flickr2016": {"bleu": 31.7, "bleu_stats": "bleu.flickr2016.tsv.gz", "chrf": 58.1,
                           "chrf_pp": 56.6, "decoding": {"beam": 4, "seconds": 14.4},
                           "hyp": "hyp.flickr2016.txt", "ref": "data/x/test.tgt.txt"}}})";
const char* kLanguageModel = R"({
  "analysis": {}, "checkpoint": "best", "config": {"task": "lm"}, "emb": 512000,
  "emb_fraction": 0.56, "emb_fraction_closed_form": 0.5636, "grad_share_output_early": 0.7,
  "grad_share_output_late": 0.9, "params": 908544, "red": 0.5, "seed": 2, "stop_reason": "max_updates",
  "tokens_per_s": 15000.0, "updates": 1500, "variant": "tied", "wall_s": 400.0,
  "tests": {"flickr2016-en": {"nll": "nll.flickr2016-en.tsv.gz", "ppl": 35.04, "ppl_word": 66.38,
                              "scoring": {"subwords": 15190, "words": 12877}}}})";

}  // namespace

TEST(RunResult, ReadsAndWritesResultJsonUnchanged) {
  for (const char* text : {kTranslation, kLanguageModel}) {
    const nlohmann::json j = nlohmann::json::parse(text);
    const yoke::RunResult r = yoke::run_result_from_json(j, "result.json");
    EXPECT_EQ(yoke::run_result_json(r), j) << text;
  }
  const yoke::RunResult t = yoke::run_result_from_json(nlohmann::json::parse(kTranslation), "result.json");
  EXPECT_EQ(t.variant, "vanilla");
  EXPECT_EQ(*t.params, 4000000);
  EXPECT_EQ(*t.updates, 3200);
  EXPECT_FALSE(t.grad_share_output_early.has_value());
  EXPECT_EQ(*t.score("flickr2016", "bleu"), 31.7);
  EXPECT_EQ(t.tests.at("flickr2016").scores.size(), 3u);  // bleu, chrf, chrf_pp: not the beam or seconds
  EXPECT_EQ(t.tests.at("flickr2016").hyp, "hyp.flickr2016.txt");
  EXPECT_FALSE(t.score("flickr2016", "ppl").has_value());
  EXPECT_FALSE(t.score("other", "bleu").has_value());
  const yoke::RunResult lm = yoke::run_result_from_json(nlohmann::json::parse(kLanguageModel), "result.json");
  EXPECT_EQ(lm.tests.at("flickr2016-en").nll, "nll.flickr2016-en.tsv.gz");
  EXPECT_TRUE(lm.tests.at("flickr2016-en").hyp.empty());
  EXPECT_EQ(*lm.grad_share_output_late, 0.9);
}

TEST(RunResult, AFieldOfTheWrongTypeNamesTheFileAndTheField) {
  auto message = [](const std::string& text) {
    try {
      yoke::run_result_from_json(nlohmann::json::parse(text), "runs/a/seed1/result.json");
    } catch (const yoke::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(R"({"params": "many"})"), "runs/a/seed1/result.json: \"params\" is not a number");
  EXPECT_EQ(message(R"({"tests": []})"), "runs/a/seed1/result.json: \"tests\" is not an object");
  EXPECT_EQ(message(R"({"tests": {"t": {"hyp": 3}}})"), "runs/a/seed1/result.json: tests.t: \"hyp\" is not a string");
  EXPECT_EQ(message("[1, 2]"), "runs/a/seed1/result.json: not a JSON object");
  // Fields it does not know are left alone: a newer writer's file still reads.
  EXPECT_EQ(message(R"({"params": 5, "new_field": {"x": 1}})"), "no error");
}
