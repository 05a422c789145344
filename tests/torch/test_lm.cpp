// Decoder-only language models: perplexity is what the formula says (a uniform model scores V),
// training on repetitive text drives it near 1, generation is reproducible and top-k = 1 is
// greedy; and the commands (prepare --lm, train task = lm, eval-lm, generate) end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "batch/lm_batch.h"
#include "cli_helpers.h"
#include "tiny_model.h"
#include "config/config.h"
#include "lm/generate.h"
#include "lm/perplexity.h"
#include "loss/batch_loss.h"
#include "text/vocab.h"
#include "train/flat_adam.h"
#include "store/model_store.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

std::vector<std::vector<int>> repeated_lines(int n_lines) {
  std::vector<std::vector<int>> lines;
  for (int i = 0; i < n_lines; ++i) lines.push_back({4, 5, 6, 7, 8, 9, 10, 11});
  return lines;
}

}  // namespace

TEST(LmBlocks, StreamIsCutIntoOverlappingWindowsThatPredictEveryTokenOnce) {
  TokenizedCorpus s;
  s.add({}, {4, 5, 6});
  s.add({}, {7});
  const auto blocks = stream_blocks(s, 3);  // stream: 3 4 5 6 3 7 3
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(std::vector<int>(blocks.tgt(0), blocks.tgt(0) + blocks.tgt_len(0)), (std::vector<int>{3, 4, 5, 6}));
  EXPECT_EQ(std::vector<int>(blocks.tgt(1), blocks.tgt(1) + blocks.tgt_len(1)), (std::vector<int>{6, 3, 7, 3}));
  const Batch b = make_lm_batch(blocks, {0, 1}, true);
  EXPECT_FALSE(b.src.defined());
  EXPECT_TRUE(at::equal(b.tgt_in, at::tensor({3, 4, 5, 6, 3, 7}, at::kLong).view({2, 3})));
  EXPECT_TRUE(at::equal(b.tgt_out, at::tensor({4, 5, 6, 3, 7, 3}, at::kLong).view({2, 3})));
  EXPECT_EQ(b.tgt_tokens, 6);  // = the stream's 7 tokens minus the start

  const Batch sb = make_lm_batch(s, {0, 1}, false);
  EXPECT_TRUE(at::equal(sb.tgt_in, at::tensor({2, 4, 5, 6, 2, 7, 0, 0}, at::kLong).view({2, 4})));
  EXPECT_TRUE(at::equal(sb.tgt_out, at::tensor({4, 5, 6, 3, 7, 3, 0, 0}, at::kLong).view({2, 4})));
}

TEST(LmPerplexity, UniformModelScoresTheVocabularySize) {
  const int V = 40;
  auto model = build_model(tiny_lm(V));
  {
    at::NoGradGuard g;
    for (auto& p : model->parameters()) p.zero_();  // every logit 0: p = 1/V for each token
  }
  const std::vector<std::vector<int>> lines = {{4, 5, 6}, {7, 8}, {9, 10, 11, 12, 13}};
  const std::vector<int64_t> words = {2, 1, 3};
  for (auto [block, stride] : std::vector<std::pair<int, int>>{{0, 0}, {4, 4}, {4, 2}, {6, 1}}) {
    const Perplexity p = lm_perplexity(*model, lines, words, block, stride);
    EXPECT_EQ(p.subwords, 3 + 2 + 5 + 3) << block;
    YOKE_EXPECT_NEAR(p.per_subword(), double(V), 1e-3) << block << "/" << stride;
    // Per word: the same likelihood over 6 words + 3 line ends.
    YOKE_EXPECT_NEAR(p.per_word(), std::pow(double(V), 13.0 / 9.0), 1e-2) << block;
  }
}

// Each line's NLL lands on its own line whatever order the batches scored the lines in: in
// sentence scoring a line alone gives the same NLL as inside the batch of lines of mixed lengths.
TEST(LmPerplexity, EveryLineKeepsItsOwnNll) {
  at::manual_seed(3);
  auto model = build_model(tiny_lm(40));
  const std::vector<std::vector<int>> lines = {{4, 5, 6, 7, 8, 9}, {7, 8}, {9, 10, 11, 12}, {13}, {5, 6, 7}};
  const std::vector<int64_t> words = {4, 1, 3, 1, 2};
  const Perplexity all = lm_perplexity(*model, lines, words, 0, 0);
  ASSERT_EQ(all.line_nll.size(), lines.size());
  double sum = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Perplexity alone = lm_perplexity(*model, {lines[i]}, {words[i]}, 0, 0);
    // The same float log-softmax of the same row, with padding in the batch: 1e-4 nats covers the
    // kernels' different sum orders over a padded row (measured ≤ 2e-6).
    YOKE_EXPECT_NEAR(all.line_nll[i], alone.nll, 1e-4) << "line " << i;
    EXPECT_EQ(all.line_subwords[i], int64_t(lines[i].size()) + 1);
    EXPECT_EQ(all.line_words[i], words[i] + 1);
    sum += all.line_nll[i];
  }
  YOKE_EXPECT_NEAR(sum, all.nll, 1e-6);  // the same float terms, added in another order
  // In blocks the lines follow the stream, and still add up to the whole.
  const Perplexity blocks = lm_perplexity(*model, lines, words, 8, 4);
  double block_sum = 0;
  for (double x : blocks.line_nll) block_sum += x;
  YOKE_EXPECT_NEAR(block_sum, blocks.nll, 1e-6);
}

TEST(LmPerplexity, OverlappingWindowsGiveContextAndNeverCountATokenTwice) {
  auto model = build_model(tiny_lm(40));
  const auto lines = repeated_lines(6);
  const std::vector<int64_t> words(lines.size(), 8);
  const Perplexity wide = lm_perplexity(*model, lines, words, 16, 16);
  const Perplexity slid = lm_perplexity(*model, lines, words, 16, 4);
  EXPECT_EQ(wide.subwords, slid.subwords);
  EXPECT_GT(wide.nll, 0);
  EXPECT_GT(slid.nll, 0);
  EXPECT_NE(slid.scoring(), wide.scoring());
}

TEST(LmTraining, RepetitiveTextDrivesPerplexityNearOne) {
  at::manual_seed(1);
  auto model = build_model(tiny_lm(16));
  model->train();
  std::vector<at::Tensor> params;
  for (auto& p : model->parameters()) params.push_back(p);
  FlatAdam opt(params, AdamOptions{0.9, 0.98, 1e-8, 0.0});
  TokenizedCorpus text;
  for (const auto& l : repeated_lines(40)) text.add({}, l);
  const auto blocks = stream_blocks(text, 24);
  std::vector<uint32_t> all(blocks.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  const Batch b = make_lm_batch(blocks, all, true);
  const auto lines = repeated_lines(5);
  const std::vector<int64_t> words(lines.size(), 8);
  const double before = lm_perplexity(*model, lines, words, 24, 24).per_subword();
  for (int step = 0; step < 60; ++step) {
    opt.zero_grad();
    auto out = batch_loss(*model, b, 0.0);
    out.loss.backward();
    opt.scale_grad(1.0 / double(out.tokens));
    opt.step(3e-3);
  }
  const double after = lm_perplexity(*model, lines, words, 24, 24).per_subword();
  EXPECT_GT(before, 5.0);
  YOKE_EXPECT_AT_MOST(after - 1.0, 0.3) << "before " << before;  // perplexity 1 is perfect
}

TEST(LmGenerate, FixedSeedIsReproducibleAndTopKOneIsGreedy) {
  at::manual_seed(2);
  auto model = build_model(tiny_lm(30));
  const std::vector<int> context = {Vocab::bos, 5, 6};
  SamplingOptions o;
  o.max_tokens = 20;
  o.temperature = 1.5;
  o.seed = 11;
  std::vector<int> streamed;
  const auto a = generate_tokens(*model, context, o, [&](int t) { streamed.push_back(t); });
  EXPECT_EQ(a, generate_tokens(*model, context, o));
  EXPECT_EQ(a, streamed);
  // Different seeds draw different text from a flat random model.
  bool differs = false;
  for (uint64_t s = 12; s < 16 && !differs; ++s) {
    o.seed = s;
    differs = generate_tokens(*model, context, o) != a;
  }
  EXPECT_TRUE(differs);

  SamplingOptions greedy;
  greedy.temperature = 0;
  greedy.max_tokens = 20;
  SamplingOptions top1 = o;
  top1.top_k = 1;
  const auto g = generate_tokens(*model, context, greedy);
  EXPECT_EQ(g, generate_tokens(*model, context, top1));
  for (int t : g) EXPECT_GE(t, 3);  // pad, unk, bos never produced
}

TEST(LmGenerate, TopPKeepsOnlyTheNucleus) {
  std::mt19937_64 rng(1);
  auto logits = at::log(at::tensor({0.f, 0.f, 0.f, 0.f, 0.6f, 0.3f, 0.1f}));
  SamplingOptions o;
  o.top_p = 0.5;  // the nucleus is token 4 alone
  for (int i = 0; i < 50; ++i) EXPECT_EQ(pick_token(logits, o, rng), 4);
  o.top_p = 0.85;  // tokens 4 and 5
  std::set<int> seen;
  for (int i = 0; i < 200; ++i) seen.insert(pick_token(logits, o, rng));
  EXPECT_EQ(seen, (std::set<int>{4, 5}));
}

TEST(LmCli, PrepareTrainEvalGenerate) {
  const auto corpus = work_dir() / "corpus";
  data_dir();  // writes the synthetic corpus
  const auto lm_data = work_dir() / "lm-data";
  ASSERT_EQ(run({YOKE_BINARY, "prepare", "--lm", "--train", (corpus / "train.tgt").string(), "--valid",
                 (corpus / "valid.tgt").string(), "--test", "toy:" + (corpus / "test.tgt").string(), "--vocab-size", "150",
                 "--out", lm_data.string()},
                work_dir() / "lm-prepare.log"),
            0)
      << slurp(work_dir() / "lm-prepare.log");
  EXPECT_EQ(nlohmann::json::parse(slurp(lm_data / "meta.json")).at("task"), "lm");
  ASSERT_TRUE(fs::exists(lm_data / "test.toy.txt"));

  const auto dir = work_dir() / "lm-model";
  ASSERT_EQ(run({YOKE_BINARY, "train", "--data", lm_data.string(), "--save_dir", dir.string(), "--task", "lm",
                 "--lm_block", "32", "--d_model", "32", "--heads", "2", "--ffn_dim", "64", "--decoder_layers", "1",
                 "--max_tokens", "512", "--max_updates", "60", "--valid_interval", "30", "--threads", "1", "--lr", "0.003",
                 "--warmup", "10", "--log_grad_paths", "true"},
                work_dir() / "lm-train.log"),
            0)
      << slurp(work_dir() / "lm-train.log");
  EXPECT_NE(slurp(work_dir() / "lm-train.log").find("training blocks"), std::string::npos);

  const auto j = nlohmann::json::parse(output_of({YOKE_BINARY, "eval-lm", "--model", dir.string(), "--text",
                                                  (lm_data / "test.toy.txt").string(), "--json"}));
  EXPECT_EQ(j.at("block"), 32);
  EXPECT_GT(j.at("ppl_subword").get<double>(), 1.0);
  // Clearly better than uniform (V = 150): what it learnt in nats per subword, ln V − ln PPL, at
  // least that of a perplexity of 0.8·V (the additive scale: a margin of 2 is twice the nats).
  YOKE_EXPECT_AT_LEAST(std::log(150.0) - std::log(j.at("ppl_subword").get<double>()), std::log(1 / 0.8));
  EXPECT_GT(j.at("ppl_word").get<double>(), j.at("ppl_subword").get<double>() * 0.99);

  const std::vector<std::string> gen = {YOKE_BINARY, "generate", "--model", dir.string(), "--prompt", "Drai",
                                        "--seed", "5", "--max-tokens", "12"};
  const auto first = output_of(gen);
  EXPECT_EQ(first.rfind("Drai", 0), 0u) << first;  // the prompt, then its continuation
  EXPECT_EQ(output_of(gen), first);
  auto greedy = gen, top1 = gen;
  greedy.insert(greedy.end(), {"--temperature", "0"});
  top1.insert(top1.end(), {"--top-k", "1"});
  EXPECT_EQ(output_of(greedy), output_of(top1));
}
