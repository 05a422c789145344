// Scoring (src/eval): agreement with sacreBLEU 2.6.0 on the shared oracle cases, plus small
// cases whose expected values follow by hand from the definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "eval/bleu.h"
#include "eval/bootstrap.h"
#include "eval/chrf.h"
#include "eval/score_files.h"
#include "eval/tokenize_13a.h"
#include "eval/unicode_lower.h"
#include "util/error.h"

namespace yoke {
namespace {

const std::string kOracleDir = std::string(YOKE_SHARED_DIR) + "/testdata/sacrebleu";

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + "yoke_score_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// ---------------------------------------------------------------- 13a tokenizer

TEST(Tokenize13a, SeparatesPunctuation) {
  EXPECT_EQ(tokenize_13a("Hello, world."), "Hello , world .");
  EXPECT_EQ(tokenize_13a("(don't) say \"no\"!"), "( don't ) say \" no \" !");
  EXPECT_EQ(tokenize_13a("U.S.A."), "U . S . A .");
  EXPECT_EQ(tokenize_13a("a/b:c;d?"), "a / b : c ; d ?");
}

TEST(Tokenize13a, KeepsNumbers) {
  EXPECT_EQ(tokenize_13a("3.5"), "3.5");
  EXPECT_EQ(tokenize_13a("It costs 3.5 dollars."), "It costs 3.5 dollars .");
  EXPECT_EQ(tokenize_13a("1,000.50"), "1,000.50");
  EXPECT_EQ(tokenize_13a("3.5, ok"), "3.5 , ok");
}

TEST(Tokenize13a, DashSplitOnlyAfterDigit) {
  EXPECT_EQ(tokenize_13a("a-b"), "a-b");
  EXPECT_EQ(tokenize_13a("1-2"), "1 - 2");
  EXPECT_EQ(tokenize_13a("1-2-3"), "1 - 2 - 3");
  EXPECT_EQ(tokenize_13a("x-1"), "x-1");
}

TEST(Tokenize13a, UnescapesAndRemovesMarkup) {
  EXPECT_EQ(tokenize_13a("&quot;Hi&quot; &amp; &lt;b&gt;"), "\" Hi \" & < b >");
  EXPECT_EQ(tokenize_13a("&amp;quot;"), "& quot ;");  // replacements run once, in order
  EXPECT_EQ(tokenize_13a("line-\nbreak"), "linebreak");
  EXPECT_EQ(tokenize_13a("a\nb"), "a b");
  EXPECT_EQ(tokenize_13a("x <skipped> y"), "x y");
}

TEST(Tokenize13a, WhitespaceAndUnicode) {
  EXPECT_EQ(tokenize_13a(""), "");
  EXPECT_EQ(tokenize_13a("  \t "), "");
  EXPECT_EQ(tokenize_13a("a\u00a0\u2003b"), "a b");  // Python's whitespace is Unicode
  EXPECT_EQ(tokenize_13a("Über-Mann."), "Über-Mann .");
  EXPECT_EQ(tokenize_13a("x.é"), "x . é");
  EXPECT_EQ(tokenize_13a("\u201eJa\u201c, sagt er\u2026"), "\u201eJa\u201c , sagt er\u2026");
}

// ---------------------------------------------------------------- lowercasing

TEST(Bleu, UnicodeLowerMatchesPython) {
  EXPECT_EQ(unicode_lower(std::string("ÄÖÜ ẞ ABC")), "äöü ß abc");
  EXPECT_EQ(unicode_lower(std::string("ČŘŠŽĚŮ Ÿ")), "čřšžěů ÿ");
  EXPECT_EQ(unicode_lower(std::string("ПРИВЕТ Ёж")), "привет ёж");
  EXPECT_EQ(unicode_lower(std::string("ΟΔΟΣ ΣΑ Σ")), "οδος σα σ");  // final sigma
  EXPECT_EQ(unicode_lower(std::string("İ")), "i\u0307");
  EXPECT_EQ(unicode_lower(std::string("a\xff"
                                      "B")),
            "a\xff"
            "b");  // invalid bytes kept
}

// ---------------------------------------------------------------- BLEU

TEST(Bleu, IdenticalIs100) {
  const BleuScore s = corpus_bleu({"The cat sat on the mat.", "Ein Mann hält ein Glas."},
                                  {"The cat sat on the mat.", "Ein Mann hält ein Glas."});
  // The score is exp(Σ log p / 4): libm rounds log and exp to within an ulp or so, and exp
  // scales the error of its argument (≈ 4.6) by 100, so allow 1e-12, not an exact 100.
  EXPECT_NEAR(s.score, 100.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.bp, 1.0);
  for (double p : s.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_EQ(s.sys_len, 13);
  EXPECT_EQ(s.ref_len, 13);
}

TEST(Bleu, EmptyHypothesisScoresZero) {
  const BleuScore s = corpus_bleu({""}, {"a b c d"});
  EXPECT_EQ(s.score, 0.0);
  EXPECT_EQ(s.bp, 0.0);  // sys_len 0
  EXPECT_EQ(s.sys_len, 0);
  EXPECT_EQ(s.ref_len, 4);
  for (double p : s.precisions) EXPECT_EQ(p, 0.0);
}

TEST(Bleu, ExpSmoothingForZeroFourGramMatches) {
  // 1-grams 4/5, 2-grams 2/4, 3-grams 1/3, 4-grams 0/2 → 100 / (2 · 2).
  const BleuScore s = corpus_bleu({"the cat sat on mat"}, {"the cat sat in mat"});
  EXPECT_DOUBLE_EQ(s.precisions[0], 80.0);
  EXPECT_DOUBLE_EQ(s.precisions[1], 50.0);
  EXPECT_NEAR(s.precisions[2], 100.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(s.precisions[3], 25.0);
  EXPECT_NEAR(s.score, std::pow(80.0 * 50.0 * (100.0 / 3) * 25.0, 0.25), 1e-9);
}

TEST(Bleu, ExpSmoothingDoublesPerZeroOrder) {
  // 1-grams 3/4, 2-grams 1/3, 3-grams 0/2 → 100/(2·2), 4-grams 0/1 → 100/(4·1).
  const BleuScore s = corpus_bleu({"a b c d"}, {"a b x d"});
  EXPECT_DOUBLE_EQ(s.precisions[2], 25.0);
  EXPECT_DOUBLE_EQ(s.precisions[3], 25.0);
  EXPECT_NEAR(s.score, std::pow(75.0 * (100.0 / 3) * 25.0 * 25.0, 0.25), 1e-9);
}

TEST(Bleu, ClipsCountsAndSmoothsFromFirstZeroOrder) {
  // "the" ×4 against one "the": 1/4; then 0/3, 0/2, 0/1 → 100/(2·3), 100/(4·2), 100/(8·1).
  const BleuScore s = corpus_bleu({"the the the the"}, {"the cat"});
  EXPECT_DOUBLE_EQ(s.precisions[0], 25.0);
  EXPECT_NEAR(s.precisions[1], 100.0 / 6, 1e-12);
  EXPECT_DOUBLE_EQ(s.precisions[2], 12.5);
  EXPECT_DOUBLE_EQ(s.precisions[3], 12.5);
  EXPECT_DOUBLE_EQ(s.bp, 1.0);
}

TEST(Bleu, NoHigherOrderNgramsGivesZero) {
  // One token: no 2-grams at all, so precisions 2..4 stay 0 and sacreBLEU's score is 0.
  const BleuScore s = corpus_bleu({"hello"}, {"hello"});
  EXPECT_DOUBLE_EQ(s.precisions[0], 100.0);
  EXPECT_EQ(s.precisions[1], 0.0);
  EXPECT_EQ(s.score, 0.0);
}

TEST(Bleu, BrevityPenalty) {
  const BleuScore s = corpus_bleu({"a b c d"}, {"a b c d e f"});
  EXPECT_NEAR(s.bp, std::exp(1.0 - 6.0 / 4.0), 1e-12);
  EXPECT_NEAR(s.score, 100.0 * std::exp(-0.5), 1e-9);
}

TEST(Bleu, CaseSensitiveUnlessLowercase) {
  const std::vector<std::string> hyp{"THE BIG CAT SAT."}, ref{"the big cat sat."};
  EXPECT_NEAR(corpus_bleu(hyp, ref, true).score, 100.0, 1e-12);  // through log and exp
  // Only "." matches: 1/5, then 0/4, 0/3, 0/2 smoothed by 2, 4, 8.
  const BleuScore s = corpus_bleu(hyp, ref, false);
  EXPECT_NEAR(s.score, std::pow(20.0 * 12.5 * (100.0 / 12) * 6.25, 0.25), 1e-9);
  EXPECT_NEAR(corpus_bleu({"ÜBER DEN FLUSS ."}, {"über den fluss ."}, true).score, 100.0, 1e-12);
}

TEST(Bleu, StatsAreAdditive) {
  const std::vector<std::string> hyps{"the cat sat on mat", "a b c d e"};
  const std::vector<std::string> refs{"the cat sat in mat", "a b c d f"};
  BleuStats total = bleu_sentence_stats(hyps[0], refs[0], false);
  total += bleu_sentence_stats(hyps[1], refs[1], false);
  EXPECT_DOUBLE_EQ(bleu_from_stats(total).score, corpus_bleu(hyps, refs).score);
  EXPECT_EQ(total.totals[0], 10);
  EXPECT_EQ(total.matches[0], 8);
  EXPECT_THROW(corpus_bleu({"a"}, {}), std::invalid_argument);
}

// ---------------------------------------------------------------- chrF

TEST(Chrf, IdenticalIs100) {
  EXPECT_DOUBLE_EQ(corpus_chrf({"Ein Mann hält ein Glas."}, {"Ein Mann hält ein Glas."}), 100.0);
  EXPECT_DOUBLE_EQ(corpus_chrf({"Ein Mann hält ein Glas."}, {"Ein Mann hält ein Glas."}, 2), 100.0);
}

TEST(Chrf, AveragesOnlyOrdersPresentOnBothSides) {
  // 1-grams: P = R = 1/2; 2-grams: 0/1; orders 3..6 absent. P = R = 1/4 → F = 1/4.
  EXPECT_NEAR(corpus_chrf({"ab"}, {"ac"}), 25.0, 1e-9);
  // 1-grams P 2/3 R 1; 2-grams P 1/2 R 1; 3-grams: the reference has none, so the order drops.
  // P = 7/12, R = 1 → F2 = 5·P·R / (4P + R) = 7/8.
  EXPECT_NEAR(corpus_chrf({"abc"}, {"ab"}), 87.5, 1e-9);
}

TEST(Chrf, IgnoresWhitespaceAndCountsCodePoints) {
  EXPECT_DOUBLE_EQ(corpus_chrf({"a b"}, {"ab"}), 100.0);
  EXPECT_NEAR(corpus_chrf({"éa"}, {"éb"}), 25.0, 1e-9);  // as "ab" vs "ac", not as bytes
  EXPECT_DOUBLE_EQ(corpus_chrf({"ÄB"}, {"äb"}, 0, true), 100.0);
}

TEST(Chrf, EmptySides) {
  EXPECT_EQ(corpus_chrf({""}, {"abc"}), 0.0);
  EXPECT_EQ(corpus_chrf({""}, {""}), 0.0);
  EXPECT_EQ(corpus_chrf({}, {}), 0.0);
}

TEST(Chrf, ChrfPlusPlusWordNgrams) {
  // Characters as in "ab" vs "ab" (P = R = 1 for orders 1, 2). Words "a" "b" vs "ab": 1-grams
  // 0 of 2 / 0 of 1; 2-grams: the reference has none, order dropped. P = R = 2/3.
  EXPECT_NEAR(corpus_chrf({"a b"}, {"ab"}, 2), 200.0 / 3, 1e-9);
  // "hi." splits into "hi" "."; chars P 2/3, 1/2 (R 1, 1); words P 1/2 R 1 → P 5/9, R 1.
  EXPECT_NEAR(corpus_chrf({"hi."}, {"hi"}, 2), 100.0 * 25 / 29, 1e-9);
  EXPECT_NEAR(corpus_chrf({"hi."}, {"hi"}, 0), 87.5, 1e-9);
}

TEST(Chrf, PunctuationSplitTakesOneMarkPerWord) {
  // "(hi)" → "(hi" ")"; "(hi" → "(" "hi". Char orders 1..4 are perfect, 5..6 absent.
  // Word 1-grams: P 1/2, R 1/3; word 2-grams: 0 of 1 / 0 of 2.
  const double p = (4 + 0.5) / 6, r = (4 + 1.0 / 3) / 6;
  EXPECT_NEAR(corpus_chrf({"(hi)"}, {"(hi )"}, 2), 100.0 * 5 * p * r / (4 * p + r), 1e-9);
}

TEST(Chrf, StatsAreAdditive) {
  ChrfStats total = chrf_sentence_stats("ab", "ac", 2, false);
  total += chrf_sentence_stats("abc", "ab", 2, false);
  EXPECT_EQ(total.v.size(), 3u * 8);
  EXPECT_DOUBLE_EQ(chrf_from_stats(total, 2), corpus_chrf({"ab", "abc"}, {"ac", "ab"}, 2));
  EXPECT_THROW(chrf_from_stats(total, 0), std::invalid_argument);
  ChrfStats other = chrf_sentence_stats("ab", "ac", 0, false);
  EXPECT_THROW(total += other, std::invalid_argument);
}

// ---------------------------------------------------------------- bootstrap

// A deterministic test set of `n` sentences over a small vocabulary.
std::vector<std::string> make_sentences(int n, int salt) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    std::string s;
    const int len = 8 + (i * 7 + salt) % 5;
    for (int j = 0; j < len; ++j)
      s += "w" + std::to_string((i * 31 + j * 17 + salt * 13) % 60) + " ";
    out.push_back(s + ".");
  }
  return out;
}

TEST(Bootstrap, IdenticalSystemsTie) {
  const std::vector<std::string> refs = make_sentences(60, 0), hyps = make_sentences(60, 1);
  const BootstrapResult r = paired_bootstrap_bleu(hyps, hyps, refs, 300);
  EXPECT_EQ(r.samples, 300);
  EXPECT_DOUBLE_EQ(r.delta, 0.0);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);  // every resample ties: (300 + 1) / 301, doubled, capped
}

TEST(Bootstrap, ClearlyBetterSystemIsSignificant) {
  const std::vector<std::string> refs = make_sentences(60, 0), poor = make_sentences(60, 1);
  const BootstrapResult r = paired_bootstrap_bleu(poor, refs, refs, 300);
  EXPECT_NEAR(r.mean_b, 100.0, 1e-12);  // through log and exp
  EXPECT_GT(r.delta, 0.0);
  EXPECT_LT(r.p_value, 0.05);
  // Two-sided: the other way round is as significant, never p = 0 (at least 2 / 301).
  const BootstrapResult back = paired_bootstrap_bleu(refs, poor, refs, 300);
  EXPECT_LT(back.p_value, 0.05);
  EXPECT_GE(back.p_value, 2.0 / 301);
  EXPECT_LT(back.ci_high, 0.0);
}

// Three "seeds" of a system: each replaces `worse_every`-th sentence (shifted per seed) of the
// references by an unrelated one, so a smaller `worse_every` is a worse system on every seed.
std::vector<std::vector<std::string>> seeds_of(const std::vector<std::string>& refs, int worse_every) {
  std::vector<std::vector<std::string>> out;
  for (int seed = 0; seed < 3; ++seed) {
    std::vector<std::string> hyps = refs;
    const auto junk = make_sentences(int(refs.size()), 7 + seed);
    for (size_t i = size_t(seed); i < refs.size(); i += size_t(worse_every)) hyps[i] = junk[i];
    out.push_back(hyps);
  }
  return out;
}

TEST(Bootstrap, OverSeedsClearlyBetterOnEverySeedIsSignificant) {
  const std::vector<std::string> refs = make_sentences(90, 0);
  const auto a = seeds_of(refs, 2), b = seeds_of(refs, 5);  // A: half the sentences wrong; B: a fifth
  const BootstrapResult r = paired_bootstrap_bleu_seeds(a, b, refs, 400);
  ASSERT_EQ(r.bleu_a.size(), 3u);
  ASSERT_EQ(r.bleu_b.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    // The per-seed scores are the plain corpus BLEU of each output; 1e-9: the same sums in
    // another order.
    EXPECT_NEAR(r.bleu_a[s], corpus_bleu(a[s], refs).score, 1e-9);
    EXPECT_GT(r.bleu_b[s], r.bleu_a[s]);
  }
  EXPECT_NEAR(r.delta, (r.bleu_b[0] + r.bleu_b[1] + r.bleu_b[2] - r.bleu_a[0] - r.bleu_a[1] - r.bleu_a[2]) / 3,
              1e-9);
  EXPECT_LT(r.p_value, 0.05);
  EXPECT_GT(r.ci_low, 0.0);               // the interval excludes "no difference"
  EXPECT_LE(r.ci_low, r.delta);           // and holds the observed Δ
  EXPECT_GE(r.ci_high, r.delta);
  // The other way round: as significant (p is two-sided), Δ and interval mirror.
  const BootstrapResult back = paired_bootstrap_bleu_seeds(b, a, refs, 400);
  EXPECT_LT(back.p_value, 0.05);
  EXPECT_LT(back.ci_high, 0.0);
}

TEST(Bootstrap, OverSeedsIdenticalSetsAreNotSignificant) {
  const std::vector<std::string> refs = make_sentences(90, 0);
  const auto a = seeds_of(refs, 3);
  const BootstrapResult r = paired_bootstrap_bleu_seeds(a, a, refs, 400);
  EXPECT_DOUBLE_EQ(r.delta, 0.0);  // the same statistics summed by the same code on both sides: exact
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);  // exact: every resample ties, so p is capped at 1
  EXPECT_LE(r.ci_low, 0.0);
  EXPECT_GE(r.ci_high, 0.0);
  // Seeds that disagree in sign (B better on one seed, worse on another) are not significant
  // either: their mean is what is tested.
  auto mixed = a;
  mixed[0] = seeds_of(refs, 6)[0];  // better than a[0]
  mixed[1] = seeds_of(refs, 2)[1];  // worse than a[1]
  const BootstrapResult m = paired_bootstrap_bleu_seeds(a, mixed, refs, 400);
  EXPECT_GT(m.bleu_b[0], m.bleu_a[0]);
  EXPECT_LT(m.bleu_b[1], m.bleu_a[1]);
  EXPECT_LE(m.ci_low, m.delta);
  EXPECT_GE(m.ci_high, m.delta);
  // Unequal seed counts are allowed (a variant whose third run is still training).
  EXPECT_NO_THROW(paired_bootstrap_bleu_seeds(a, {a[0], a[1]}, refs, 50));
  EXPECT_THROW(paired_bootstrap_bleu_seeds(a, {}, refs, 50), std::invalid_argument);
}

TEST(Bootstrap, QuantileInterpolatesBetweenOrderStatistics) {
  // One multiply-add on sorted values, no BLAS and no sum whose order a machine could change:
  // EXPECT_DOUBLE_EQ's 4 ulps is the whole tolerance this needs.
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2, 4}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2, 4}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2, 4}, 0.5), 2.5);     // numpy.quantile([1,2,3,4], 0.5)
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.025), 0.25);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.975), 7.0);
  EXPECT_THROW(quantile({}, 0.5), std::invalid_argument);
}

TEST(Bootstrap, DeterministicForSeedAndChecksSizes) {
  const std::vector<std::string> refs = make_sentences(30, 0);
  std::vector<std::string> a = make_sentences(30, 1), b = refs;
  for (int i = 0; i < 30; i += 2) b[i] = a[i];  // B: half perfect, half like A
  const BootstrapResult r1 = paired_bootstrap_bleu(a, b, refs, 200, 7);
  const BootstrapResult r2 = paired_bootstrap_bleu(a, b, refs, 200, 7);
  EXPECT_EQ(r1.p_value, r2.p_value);
  EXPECT_THROW(paired_bootstrap_bleu(a, b, make_sentences(29, 0)), std::invalid_argument);
  EXPECT_THROW(paired_bootstrap_bleu(a, b, refs, 0), std::invalid_argument);
}

// ---------------------------------------------------------------- files and sacreBLEU oracle

TEST(ScoreFiles, ReportsAllMetrics) {
  const std::string hyp = write_temp("hyp.txt", "the cat sat on mat\n");
  const std::string ref = write_temp("ref.txt", "the cat sat in mat\n");
  const nlohmann::json j = score_files(hyp, ref, false);
  EXPECT_NEAR(j.at("bleu").get<double>(),
              corpus_bleu({"the cat sat on mat"}, {"the cat sat in mat"}).score, 1e-12);
  EXPECT_NEAR(j.at("chrf").get<double>(),
              corpus_chrf({"the cat sat on mat"}, {"the cat sat in mat"}), 1e-9);
  EXPECT_NEAR(j.at("chrf_pp").get<double>(),
              corpus_chrf({"the cat sat on mat"}, {"the cat sat in mat"}, 2), 1e-9);
  EXPECT_EQ(j.at("precisions").size(), 4u);
  EXPECT_DOUBLE_EQ(j.at("bp").get<double>(), 1.0);
  EXPECT_EQ(j.at("sys_len").get<int64_t>(), 5);
  EXPECT_EQ(j.at("ref_len").get<int64_t>(), 5);
}

TEST(ScoreFiles, UnequalLineCountsNameBothCounts) {
  const std::string hyp = write_temp("hyp3.txt", "a\nb\nc\n");
  const std::string ref = write_temp("ref2.txt", "a\nb\n");
  try {
    score_files(hyp, ref, false);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(hyp), std::string::npos) << msg;
    EXPECT_NE(msg.find("3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2"), std::string::npos) << msg;
  }
}

// Differences between our scores and sacreBLEU's for one case: scores within 0.01, lengths exact.
std::vector<std::string> disagreements(const nlohmann::json& got, const nlohmann::json& want) {
  std::vector<std::string> out;
  const auto near = [&](const std::string& what, double g, double w) {
    if (!(std::fabs(g - w) <= 0.01))
      out.push_back(what + ": got " + std::to_string(g) + ", sacreBLEU " + std::to_string(w));
  };
  near("bleu", got.at("bleu"), want.at("bleu"));
  for (int n = 0; n < 4; ++n)
    near("precision " + std::to_string(n + 1), got.at("precisions")[n], want.at("precisions")[n]);
  near("bp", got.at("bp"), want.at("bp"));
  near("chrf", got.at("chrf"), want.at("chrf"));
  near("chrf_pp", got.at("chrf_pp"), want.at("chrf_pp"));
  for (const char* len : {"sys_len", "ref_len"})
    if (got.at(len).get<int64_t>() != want.at(len).get<int64_t>())
      out.push_back(std::string(len) + ": got " + got.at(len).dump() + ", sacreBLEU " +
                    want.at(len).dump());
  return out;
}

TEST(ScoreFiles, AgreesWithSacrebleuOnSharedCases) {
  const std::string expected_path = kOracleDir + "/expected.json";
  if (!file_exists(expected_path))
    GTEST_SKIP() << "shared sacreBLEU test data not found at " << kOracleDir;
  nlohmann::json expected;
  std::ifstream(expected_path) >> expected;

  int agreeing = 0, total = 0;
  for (const nlohmann::json& c : expected.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    const nlohmann::json got =
        score_files(kOracleDir + "/" + name + ".hyp", kOracleDir + "/" + name + ".ref",
                    c.at("lowercase").get<bool>());
    const std::vector<std::string> diffs = disagreements(got, c);
    for (const std::string& d : diffs) ADD_FAILURE() << name << ": " << d;
    agreeing += diffs.empty();
    ++total;
  }
  EXPECT_GT(total, 0);
  std::cout << "[ sacreBLEU ] " << agreeing << " of " << total << " shared cases agree\n";
}

}  // namespace
}  // namespace yoke
