// n-best lists, their scores, and forced decoding (teacher forcing) of given targets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cli_helpers.h"
#include "copy_task.h"
#include "decode/force_decode.h"
#include "decode/search.h"
#include "decode/batched_decoding.h"
#include "text/vocab.h"
#include "tiny_model.h"
#include "store/model_store.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

std::vector<std::string> split_bars(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t bar; (bar = line.find(" ||| ", at)) != std::string::npos; at = bar + 5) out.push_back(line.substr(at, bar - at));
  out.push_back(line.substr(at));
  return out;
}

}  // namespace

TEST(Nbest, ListsAreSortedAndStartWithTheBeamOutput) {
  at::manual_seed(11);
  auto model = build_model(tiny_config(Tie::decoder, Estimator::dot));
  model->eval();
  const auto sources = random_sentences(8, 9, 24, 12);
  for (double lenpen : {0.0, 1.0}) {
    SearchOptions o;
    o.beam = 5;
    o.lenpen = lenpen;
    const auto best = translate_ids(*model, sources, o, 100000);
    const auto one = translate_ids_nbest(*model, sources, o, 1, 100000);
    const auto lists = translate_ids_nbest(*model, sources, o, 5, 100000);
    for (size_t i = 0; i < sources.size(); ++i) {
      ASSERT_EQ(one[i].size(), 1u);
      ASSERT_FALSE(lists[i].empty());
      EXPECT_LE(lists[i].size(), 5u);
      EXPECT_EQ(lists[i].front().tokens, best[i]) << "sentence " << i;
      EXPECT_EQ(one[i].front().tokens, best[i]) << "sentence " << i;
      EXPECT_EQ(one[i].front().score, lists[i].front().score);
      for (size_t h = 1; h < lists[i].size(); ++h) EXPECT_GE(lists[i][h - 1].score, lists[i][h].score);
      for (const auto& h : lists[i])
        YOKE_EXPECT_NEAR(h.score, h.log_prob / std::pow(double(h.tokens.size() + 1), lenpen), 1e-9);
    }
  }
}

TEST(Nbest, BeamOfOneFindsTheGreedyOutput) {
  at::manual_seed(13);
  auto model = build_model(tiny_config());
  model->eval();
  const auto sources = random_sentences(6, 9, 24, 14);
  SearchOptions o;
  o.beam = 1;
  const auto greedy = translate_ids(*model, sources, o, 100000);
  const auto lists = translate_ids_nbest(*model, sources, o, 1, 100000);
  for (size_t i = 0; i < sources.size(); ++i) EXPECT_EQ(lists[i].front().tokens, greedy[i]) << i;
}

// Teacher forcing (all positions at once, batched and padded) and incremental decoding (one
// step at a time, in the beam's reordered batch) compute the same log-probabilities up to float
// rounding: sums of ~30 float log-probabilities of size ~3 differ by well under 1e-4.
TEST(ForceDecode, ScoresOfBeamOutputsEqualTheDecodersScores) {
  for (auto output : {Estimator::dot, Estimator::cosine}) {
    at::manual_seed(15);
    auto model = build_model(tiny_config(Tie::all, output));
    model->eval();
    const auto sources = random_sentences(10, 12, 24, 16);
    for (double lenpen : {0.0, 1.0}) {
      SearchOptions o;
      o.beam = 4;
      o.lenpen = lenpen;
      const auto lists = translate_ids_nbest(*model, sources, o, 4, 100000);
      std::vector<std::vector<int>> src, tgt;
      std::vector<Hypothesis> hyps;
      for (size_t i = 0; i < sources.size(); ++i)
        for (const auto& h : lists[i]) {
          src.push_back(sources[i]);
          tgt.push_back(h.tokens);
          hyps.push_back(h);
        }
      ASSERT_GT(hyps.size(), sources.size());  // some lists hold more than one hypothesis
      const auto forced = force_decode(*model, src, tgt, lenpen, 300);  // small batches: padding differs from the beam's
      ASSERT_EQ(forced.size(), hyps.size());
      for (size_t i = 0; i < hyps.size(); ++i) {
        YOKE_EXPECT_NEAR(forced[i].log_prob, hyps[i].log_prob, 1e-4) << "hypothesis " << i;
        YOKE_EXPECT_NEAR(forced[i].score, hyps[i].score, 1e-4) << "hypothesis " << i;
        ASSERT_EQ(forced[i].token_log_probs.size(), tgt[i].size() + 1);
        double sum = 0;
        for (float lp : forced[i].token_log_probs) {
          EXPECT_LE(lp, 0.0f);
          sum += lp;
        }
        YOKE_EXPECT_NEAR(sum, forced[i].log_prob, 1e-9);
      }
    }
  }
}

// Forced decoding batches through decoding's one loop (decode/batch_loop.h): one batch on one
// worker and many small batches on two give each pair its own score, in input order; progress
// counts every pair once; a model in training mode is put back in it. The batches' shapes differ
// (padding, rows), so products may sum in another order: 1e-4, as above.
TEST(ForceDecode, BatchesAndWorkersKeepEachPairsScore) {
  at::manual_seed(16);
  auto model = build_model(tiny_config(Tie::all));
  const auto sources = random_sentences(17, 14, 24, 17), targets = random_sentences(17, 11, 24, 18);
  model->train();
  const auto whole = force_decode(*model, sources, targets, 1.0, 100000);
  EXPECT_TRUE(model->is_training());
  std::vector<size_t> progress;
  const auto split = force_decode(*model, sources, targets, 1.0, 40, [&](size_t done) { progress.push_back(done); }, 2);
  ASSERT_EQ(split.size(), whole.size());
  ASSERT_GT(progress.size(), 3u);  // 40 padded tokens hold a few pairs a batch
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), sources.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    ASSERT_EQ(split[i].token_log_probs.size(), targets[i].size() + 1) << "pair " << i;
    YOKE_EXPECT_NEAR(split[i].log_prob, whole[i].log_prob, 1e-4) << "pair " << i;
  }
  // Not all the same: a pair's score is its own, not a neighbour's.
  EXPECT_NE(whole.front().log_prob, whole.back().log_prob);
}

// An empty target alone is a batch of one decoder position, whose causal mask is [1, 1]: it is
// scored (eos after bos), as it is within a batch of longer targets. The two batches differ in
// shape, so products may sum in another order: 1e-4, as above.
TEST(ForceDecode, AnEmptyTargetAloneIsScoredAsInABatch) {
  at::manual_seed(17);
  auto model = build_model(tiny_config(Tie::all));
  model->eval();
  const auto sources = random_sentences(2, 6, 24, 19);
  const std::vector<std::vector<int>> targets{{}, {5, 6, 7}};
  const auto alone = force_decode(*model, {sources[0]}, {targets[0]}, 1.0, 100000);
  const auto together = force_decode(*model, sources, targets, 1.0, 100000);
  ASSERT_EQ(alone.front().token_log_probs.size(), 1u);
  YOKE_EXPECT_NEAR(alone.front().log_prob, together.front().log_prob, 1e-4);
}

TEST(ForceDecode, RejectsTargetsLongerThanThePositions) {
  auto model = build_model(tiny_config());  // max_positions 64
  std::vector<std::vector<int>> src{{5, 6}}, tgt{std::vector<int>(64, 7)};
  try {
    force_decode(*model, src, tgt, 1.0, 1000);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("target 1 has 64 subwords"), std::string::npos) << e.what();
  }
}

// The command line: n-best lines are INDEX ||| TEXT ||| SCORE, sorted, the first equal to the
// 1-best output; --scores and score-pairs print the same numbers for the same ids.
TEST(NbestCli, NbestScoresAndScorePairs) {
  const auto dir = tiny_translation_model();
  const std::string src = (data_dir() / "test.toy.src.txt").string();
  const auto translate = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {YOKE_BINARY, "translate", "--model", dir.string(), "--input", src, "--beam", "4",
                                     "--threads", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return lines_of(output_of(args));
  };
  const auto plain = translate({});
  const auto scored = translate({"--scores"});
  const auto one = translate({"--nbest", "1"});
  const auto four = translate({"--nbest", "4"});
  ASSERT_EQ(plain.size(), scored.size());
  ASSERT_EQ(one.size(), plain.size());
  ASSERT_GE(four.size(), plain.size());
  std::vector<std::vector<std::vector<std::string>>> by_index(plain.size());
  for (const auto& line : four) {
    auto f = split_bars(line);
    ASSERT_EQ(f.size(), 3u) << line;
    by_index.at(size_t(std::stoul(f[0]))).push_back(f);
  }
  for (size_t i = 0; i < plain.size(); ++i) {
    auto s = split_bars(scored[i]), o = split_bars(one[i]);
    ASSERT_EQ(s.size(), 2u) << scored[i];
    ASSERT_EQ(o.size(), 3u) << one[i];
    EXPECT_EQ(s[0], plain[i]);
    EXPECT_EQ(o[0], std::to_string(i));
    EXPECT_EQ(o[1], plain[i]);
    ASSERT_FALSE(by_index[i].empty()) << "no hypotheses for line " << i;
    EXPECT_EQ(by_index[i].front()[1], plain[i]) << "line " << i;
    EXPECT_EQ(by_index[i].front()[2], s[1]);
    EXPECT_EQ(o[2], s[1]);
    for (size_t h = 1; h < by_index[i].size(); ++h)
      EXPECT_GE(std::stod(by_index[i][h - 1][2]), std::stod(by_index[i][h][2])) << "line " << i;
  }
  // score-pairs reads the n-best list and appends a score. (Equality with the search's scores is
  // tested on ids above: printed text need not encode back to the subwords the search chose.)
  const auto nbest_file = work_dir() / "nbest.txt", best_file = work_dir() / "best.txt";
  {
    std::ofstream f(nbest_file), b(best_file);
    for (const auto& l : four) f << l << '\n';
    for (const auto& l : plain) b << l << '\n';
  }
  const auto rescored = lines_of(output_of({YOKE_BINARY, "score-pairs", "--model", dir.string(), "--src", src, "--tgt",
                                            nbest_file.string(), "--nbest", "--lenpen", "1", "--threads", "1"}));
  ASSERT_EQ(rescored.size(), four.size());
  for (size_t i = 0; i < four.size(); ++i) {
    EXPECT_EQ(split_bars(rescored[i]).size(), 4u) << rescored[i];
    EXPECT_EQ(rescored[i].rfind(four[i] + " ||| ", 0), 0u) << rescored[i];
  }
  // translate --force-decode and score-pairs are the same computation on the same text.
  const auto forced = translate({"--force-decode", best_file.string()});
  const auto pairs = lines_of(output_of({YOKE_BINARY, "score-pairs", "--model", dir.string(), "--src", src, "--tgt",
                                         best_file.string(), "--lenpen", "1", "--word-scores", "--threads", "1"}));
  ASSERT_EQ(forced.size(), plain.size());
  ASSERT_EQ(pairs.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    auto f = split_bars(forced[i]), p = split_bars(pairs[i]);
    ASSERT_EQ(f.size(), 2u) << forced[i];
    ASSERT_EQ(p.size(), 2u) << pairs[i];
    EXPECT_EQ(f[0], plain[i]);
    YOKE_EXPECT_NEAR(std::stod(f[1]), std::stod(p[0]), 2e-6) << "line " << i;  // printed with 6 decimals
    std::istringstream words(p[1]);
    double sum = 0;
    size_t n = 0;
    for (double lp; words >> lp; ++n) sum += lp;
    ASSERT_GT(n, 0u);
    YOKE_EXPECT_NEAR(sum / double(n), std::stod(p[0]), 1e-5 * double(n)) << "line " << i;  // lenpen 1: the mean
  }
  // Mismatched files are an error naming both.
  const auto log = work_dir() / "score_pairs_error.log";
  EXPECT_EQ(run({YOKE_BINARY, "score-pairs", "--model", dir.string(), "--src", src, "--tgt",
                 (data_dir() / "valid.src.txt").string()}, log), 2);
  EXPECT_NE(slurp(log).find("lines but"), std::string::npos) << slurp(log);
}
