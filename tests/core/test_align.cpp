// Tests of the IBM-2 aligner (src/align/ibm2.*, align_files.*) and the shared-private pairing
// (src/align/pairing.*).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "align/align_files.h"
#include "align/ibm2.h"
#include "align/pairing.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace yoke;

namespace {

using Corpus = std::vector<std::vector<std::string>>;
using Links = std::vector<std::pair<int, int>>;

// A parallel corpus generated from a random one-to-one lexicon, with the true links kept.
struct PlantedCorpus {
  Corpus src, tgt;
  std::vector<Links> links;                    // (src_index, tgt_index)
  std::map<std::string, std::string> lexicon;  // source word -> target word
};

// Sentences of 3-10 distinct words; the target is the word-by-word translation with adjacent
// words swapped now and then (local reordering) and, when `filler`, an untranslated word
// inserted sometimes (to be aligned to null).
PlantedCorpus planted_corpus(int pairs, double swap_prob, bool filler, unsigned seed = 7) {
  std::mt19937 rng(seed);
  const int vocab = 50;
  std::vector<int> perm(vocab);
  for (int k = 0; k < vocab; ++k) perm[k] = k;
  std::shuffle(perm.begin(), perm.end(), rng);
  PlantedCorpus c;
  for (int k = 0; k < vocab; ++k) c.lexicon["s" + std::to_string(k)] = "t" + std::to_string(perm[k]);
  std::uniform_int_distribution<int> length(3, 10);
  std::uniform_real_distribution<double> coin(0, 1);
  for (int s = 0; s < pairs; ++s) {
    std::vector<int> words(vocab);
    for (int k = 0; k < vocab; ++k) words[k] = k;
    std::shuffle(words.begin(), words.end(), rng);
    words.resize(length(rng));
    std::vector<int> order(words.size());  // order[t] = source position of target word t
    for (size_t k = 0; k < order.size(); ++k) order[k] = int(k);
    for (size_t k = 0; k + 1 < order.size(); ++k)
      if (coin(rng) < swap_prob) std::swap(order[k], order[k + 1]), ++k;
    std::vector<std::string> src, tgt;
    Links links;
    for (int w : words) src.push_back("s" + std::to_string(w));
    for (size_t t = 0; t < order.size(); ++t) {
      tgt.push_back(c.lexicon[src[order[t]]]);
      links.emplace_back(order[t], int(t));
    }
    if (filler && coin(rng) < 0.2) {
      const int at = std::uniform_int_distribution<int>(0, int(tgt.size()))(rng);
      tgt.insert(tgt.begin() + at, "ja");
      for (auto& link : links)
        if (link.second >= at) ++link.second;
    }
    std::sort(links.begin(), links.end());
    c.src.push_back(src);
    c.tgt.push_back(tgt);
    c.links.push_back(links);
  }
  return c;
}

// (recall of planted links, precision of predicted links).
std::pair<double, double> link_scores(const std::vector<Links>& gold, const std::vector<Links>& got) {
  size_t hits = 0, gold_total = 0, got_total = 0;
  for (size_t s = 0; s < gold.size(); ++s) {
    std::set<std::pair<int, int>> truth(gold[s].begin(), gold[s].end());
    for (const auto& link : got[s]) hits += truth.count(link);
    gold_total += gold[s].size();
    got_total += got[s].size();
  }
  return {double(hits) / gold_total, got_total ? double(hits) / got_total : 0.0};
}

// The best generated word per given word of a translation table.
std::map<std::string, std::string> table_argmax(
    const std::vector<std::tuple<std::string, std::string, double>>& table) {
  std::map<std::string, std::string> best;
  for (const auto& [given, generated, p] : table) best.emplace(given, generated);  // first = best
  return best;
}

fs::path temp_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("yoke_test_align_" + name + "_" +
                                              std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_lines(const fs::path& path, const Corpus& corpus) {
  std::ofstream out(path);
  for (const auto& sentence : corpus) {
    for (size_t k = 0; k < sentence.size(); ++k) out << (k ? " " : "") << sentence[k];
    out << '\n';
  }
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

// ---------------------------------------------------------------- diagonal prior

TEST(Ibm2DiagonalPrior, ClosedFormsMatchBruteForce) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> length(1, 80);
  std::uniform_real_distribution<double> tension(0.01, 30.0);
  for (int trial = 0; trial < 2000; ++trial) {
    const int m = length(rng), n = length(rng);
    const int i = std::uniform_int_distribution<int>(1, m)(rng);
    const double lambda = trial % 10 == 0 ? 1e-6 * (trial % 3) : tension(rng);
    double z = 0, weighted = 0;
    for (int j = 1; j <= n; ++j) {
      const double u = std::exp(-lambda * std::fabs(double(i) / m - double(j) / n));
      z += u;
      weighted += u * -std::fabs(double(i) / m - double(j) / n);
    }
    EXPECT_NEAR(DiagonalPrior::z(i, m, n, lambda), z, 1e-10 * z)
        << "i=" << i << " m=" << m << " n=" << n << " lambda=" << lambda;
    EXPECT_NEAR(DiagonalPrior::dlogz(i, m, n, lambda), weighted / z, 1e-9)
        << "i=" << i << " m=" << m << " n=" << n << " lambda=" << lambda;
  }
}

TEST(Ibm2DiagonalPrior, FeatureIsZeroOnDiagonal) {
  EXPECT_DOUBLE_EQ(DiagonalPrior::feature(2, 4, 5, 10), 0.0);
  EXPECT_DOUBLE_EQ(DiagonalPrior::feature(1, 3, 4, 4), -0.5);
  EXPECT_DOUBLE_EQ(DiagonalPrior::unnormalized(2, 4, 5, 10, 7.0), 1.0);
}

// ---------------------------------------------------------------- aligner

TEST(Ibm2Aligner, RecoversPlantedLinksAndLexicon) {
  const auto c = planted_corpus(2000, 0.3, true);
  Ibm2Aligner aligner;
  aligner.train(c.src, c.tgt, AlignOptions{});
  const auto [recall, precision] = link_scores(c.links, aligner.align(c.src, c.tgt));
  EXPECT_GE(recall, 0.95);
  EXPECT_GE(precision, 0.95);
  const auto best = table_argmax(aligner.translation_table(0.01));
  for (const auto& [x, y] : c.lexicon) {
    ASSERT_TRUE(best.count(x)) << x;
    EXPECT_EQ(best.at(x), y) << x;
    EXPECT_GT(aligner.prob(x, y), 0.8) << x;
  }
  EXPECT_EQ(aligner.history().size(), 5u);
  EXPECT_GT(aligner.history().back().log_likelihood, aligner.history().front().log_likelihood);
}

TEST(Ibm2Aligner, TranslationTableIsSortedAndNormalized) {
  const auto c = planted_corpus(300, 0.3, true);
  Ibm2Aligner aligner;
  aligner.train(c.src, c.tgt, AlignOptions{});
  const auto table = aligner.translation_table(0.0);
  std::map<std::string, double> row_sums;
  for (size_t k = 0; k < table.size(); ++k) {
    row_sums[std::get<0>(table[k])] += std::get<2>(table[k]);
    if (k == 0) continue;
    EXPECT_LE(std::get<0>(table[k - 1]), std::get<0>(table[k]));
    if (std::get<0>(table[k]) == std::get<0>(table[k - 1])) {
      EXPECT_GE(std::get<2>(table[k - 1]), std::get<2>(table[k]));
    }
  }
  for (const auto& [x, sum] : row_sums) EXPECT_NEAR(sum, 1.0, 1e-9) << x;
  for (const auto& entry : aligner.translation_table(0.2)) EXPECT_GE(std::get<2>(entry), 0.2);
}

TEST(Ibm2Aligner, ReverseKeepsSourceTargetOrder) {
  const auto c = planted_corpus(2000, 0.3, false);
  AlignOptions options;
  options.reverse = true;
  Ibm2Aligner aligner;
  aligner.train(c.src, c.tgt, options);
  EXPECT_TRUE(aligner.reverse());
  const auto [recall, precision] = link_scores(c.links, aligner.align(c.src, c.tgt));
  EXPECT_GE(recall, 0.95);
  EXPECT_GE(precision, 0.95);
  // Reverse tables are (target y, source x, p(x|y)).
  const auto best = table_argmax(aligner.translation_table(0.01));
  for (const auto& [x, y] : c.lexicon) {
    ASSERT_TRUE(best.count(y)) << y;
    EXPECT_EQ(best.at(y), x) << y;
  }
}

TEST(Ibm2Aligner, TensionGrowsOnMonotoneData) {
  const auto c = planted_corpus(500, 0.0, false);
  Ibm2Aligner aligner;
  aligner.train(c.src, c.tgt, AlignOptions{});
  EXPECT_GT(aligner.tension(), 6.0);
  EXPECT_LE(aligner.tension(), 14.0);
  AlignOptions fixed;
  fixed.optimize_tension = false;
  aligner.train(c.src, c.tgt, fixed);
  EXPECT_DOUBLE_EQ(aligner.tension(), 4.0);
}

TEST(Ibm2Aligner, ThreadCountDoesNotChangeResult) {
  const auto c = planted_corpus(400, 0.3, true);
  AlignOptions one, three;
  one.threads = 1;
  three.threads = 3;
  Ibm2Aligner a, b;
  a.train(c.src, c.tgt, one);
  b.train(c.src, c.tgt, three);
  EXPECT_EQ(a.align(c.src, c.tgt), b.align(c.src, c.tgt));
  EXPECT_NEAR(a.tension(), b.tension(), 1e-9);
  for (const auto& [x, y] : c.lexicon) EXPECT_NEAR(a.prob(x, y), b.prob(x, y), 1e-9);
}

TEST(Ibm2Aligner, EmptySidesAndUnknownWords) {
  Corpus src{{"a", "b"}, {}, {"b", "c"}}, tgt{{"x", "y"}, {"z"}, {"y", "w"}};
  Ibm2Aligner aligner;
  aligner.train(src, tgt, AlignOptions{});
  const auto links = aligner.align(src, tgt);
  ASSERT_EQ(links.size(), 3u);
  EXPECT_TRUE(links[1].empty());
  const auto unseen = aligner.align({{"q", "r"}}, {{"s", "t"}});  // prior alone decides
  EXPECT_EQ(unseen, (std::vector<Links>{{{0, 0}, {1, 1}}}));
  EXPECT_THROW(aligner.train(src, {{"x"}}, AlignOptions{}), std::invalid_argument);
}

// ---------------------------------------------------------------- files

TEST(AlignFiles, WritesPharaohAndTable) {
  const auto c = planted_corpus(300, 0.3, true);
  const fs::path dir = temp_dir("files");
  write_lines(dir / "train.src", c.src);
  write_lines(dir / "train.tgt", c.tgt);
  std::ostringstream log;
  const auto result = align_files((dir / "train.src").string(), (dir / "train.tgt").string(),
                                  (dir / "out.align").string(), (dir / "table.tsv").string(),
                                  AlignOptions{}, log);
  EXPECT_EQ(result.sentences, 300u);
  EXPECT_GT(result.tension, 0.0);
  const auto lines = read_lines(dir / "out.align");
  ASSERT_EQ(lines.size(), 300u);
  std::vector<Links> got;
  for (const auto& line : lines) {
    std::istringstream in(line);
    Links links;
    for (std::string link; in >> link;) {
      const auto dash = link.find('-');
      ASSERT_NE(dash, std::string::npos) << line;
      links.emplace_back(std::stoi(link.substr(0, dash)), std::stoi(link.substr(dash + 1)));
    }
    got.push_back(links);
  }
  EXPECT_GE(link_scores(c.links, got).first, 0.9);
  const auto table = read_lines(dir / "table.tsv");
  ASSERT_FALSE(table.empty());
  for (const auto& line : table) {
    const auto first = line.find('\t'), second = line.find('\t', first + 1);
    ASSERT_NE(second, std::string::npos) << line;
    EXPECT_GE(std::stod(line.substr(second + 1)), 0.01) << line;
  }
  EXPECT_FALSE(fs::exists(dir / "out.align.tmp"));
  EXPECT_NE(log.str().find("tension"), std::string::npos);
  fs::remove_all(dir);
}

TEST(AlignFiles, UnequalLineCountsNameBothFiles) {
  const fs::path dir = temp_dir("unequal");
  write_lines(dir / "a.src", {{"a", "b"}, {"c"}, {"d"}});
  write_lines(dir / "a.tgt", {{"x"}, {"y"}});
  std::ostringstream log;
  try {
    align_files((dir / "a.src").string(), (dir / "a.tgt").string(), (dir / "out").string(), "",
                AlignOptions{}, log);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a.src"), std::string::npos) << what;
    EXPECT_NE(what.find("a.tgt"), std::string::npos) << what;
    EXPECT_NE(what.find("3"), std::string::npos) << what;
    EXPECT_NE(what.find("2"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir / "out"));
  EXPECT_THROW(align_files((dir / "missing").string(), (dir / "a.tgt").string(),
                           (dir / "out").string(), "", AlignOptions{}, log),
               InputError);
  fs::remove_all(dir);
}

TEST(AlignFiles, EmptyLineGivesEmptyAlignment) {
  const fs::path dir = temp_dir("empty");
  write_lines(dir / "s", {{"a", "b"}, {}, {"b", "a"}});
  write_lines(dir / "t", {{"x", "y"}, {"z"}, {"y", "x"}});
  std::ostringstream log;
  align_files((dir / "s").string(), (dir / "t").string(), (dir / "o").string(), "",
              AlignOptions{}, log);
  const auto lines = read_lines(dir / "o");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "");
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- pairing

namespace {

// Source: <pad> the house Berlin cat xyz rare;  target: <pad> das Haus Berlin Katze selten foo.
PairingInput small_pairing_input() {
  PairingInput in;
  in.src_words = {"<pad>", "the", "house", "Berlin", "cat", "xyz", "rare"};
  in.src_freq = {0, 100, 50, 20, 30, 5, 1};
  in.tgt_words = {"<pad>", "das", "Haus", "Berlin", "Katze", "selten", "foo", "bar"};
  in.tgt_freq = {0, 90, 45, 18, 3, 7, 2, 1};
  in.align_prob = {
      {1, 1, 0.6}, {1, 2, 0.2},   // the -> das
      {2, 1, 0.5}, {2, 2, 0.4},   // house wants das (taken by the more frequent "the") -> Haus
      {4, 4, 0.04},               // cat -> Katze below threshold: not lm
      {3, 3, 0.01},               // Berlin -> Berlin weak: left for wf
  };
  in.src_skip = {true, false, false, false, false, false, false};
  in.tgt_skip = {true, false, false, false, false, false, false, false};
  return in;
}

}  // namespace

TEST(PairingWords, CategoriesInOrderWithThresholdFormAndRank) {
  const auto in = small_pairing_input();
  const auto pairs = pair_words(in);
  std::map<int, WordPair> by_src;
  for (const auto& p : pairs) by_src[p.src_id] = p;
  ASSERT_EQ(pairs.size(), 6u);  // 6 source words (pad skipped), 7 free targets
  EXPECT_EQ(by_src[1].tgt_id, 1);
  EXPECT_EQ(by_src[1].category, PairCategory::lm);
  EXPECT_DOUBLE_EQ(by_src[1].score, 0.6);
  EXPECT_EQ(by_src[2].tgt_id, 2);  // next best free candidate
  EXPECT_EQ(by_src[2].category, PairCategory::lm);
  EXPECT_EQ(by_src[3].tgt_id, 3);  // identical form
  EXPECT_EQ(by_src[3].category, PairCategory::wf);
  EXPECT_DOUBLE_EQ(by_src[3].score, 0.01);
  EXPECT_NE(by_src[4].category, PairCategory::lm);  // 0.04 < 0.05
  // ur by rank: sources cat(30) xyz(5) rare(1) with targets selten(7) Katze(3) foo(2); bar left.
  EXPECT_EQ(by_src[4].tgt_id, 5);
  EXPECT_EQ(by_src[5].tgt_id, 4);
  EXPECT_EQ(by_src[6].tgt_id, 6);
  for (int x : {4, 5, 6}) EXPECT_EQ(by_src[x].category, PairCategory::ur);
  // Order: lm, then wf, then ur.
  for (size_t k = 1; k < pairs.size(); ++k)
    EXPECT_LE(int(pairs[k - 1].category), int(pairs[k].category));
  const auto counts = count_pairs(pairs, in.src_words.size(), in.tgt_words.size());
  EXPECT_EQ(counts.lm, 2u);
  EXPECT_EQ(counts.wf, 1u);
  EXPECT_EQ(counts.ur, 3u);
  EXPECT_EQ(counts.src_unpaired, 1u);  // <pad>
  EXPECT_EQ(counts.tgt_unpaired, 2u);  // <pad>, bar
}

TEST(PairingWords, LowerThresholdMakesLexicalPair) {
  auto in = small_pairing_input();
  in.threshold = 0.03;
  for (const auto& p : pair_words(in))
    if (p.src_id == 4) {
      EXPECT_EQ(p.tgt_id, 4);
      EXPECT_EQ(p.category, PairCategory::lm);
    }
}

TEST(PairingWords, BestFreeCandidateBelowThresholdBlocksLexical) {
  PairingInput in;
  in.src_words = {"a", "b"};
  in.src_freq = {10, 5};
  in.tgt_words = {"x", "y"};
  in.tgt_freq = {10, 5};
  in.align_prob = {{0, 0, 0.9}, {1, 0, 0.8}, {1, 1, 0.01}};
  const auto pairs = pair_words(in);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].category, PairCategory::lm);
  EXPECT_EQ(pairs[1].category, PairCategory::ur);
  EXPECT_EQ(pairs[1].src_id, 1);
  EXPECT_EQ(pairs[1].tgt_id, 1);
}

TEST(PairingWords, TiesBrokenById) {
  PairingInput in;
  in.src_words = {"a", "b"};
  in.src_freq = {5, 5};  // equal: "a" (id 0) chooses first
  in.tgt_words = {"x", "y"};
  in.tgt_freq = {1, 1};
  in.align_prob = {{0, 1, 0.5}, {0, 0, 0.5}, {1, 0, 0.9}};
  const auto pairs = pair_words(in);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].src_id, 0);
  EXPECT_EQ(pairs[0].tgt_id, 0);  // equal probability: smaller target id
  EXPECT_EQ(pairs[1].src_id, 1);
  EXPECT_EQ(pairs[1].tgt_id, 1);
  EXPECT_EQ(pairs[1].category, PairCategory::ur);
}

TEST(PairingWords, RandomInputsStayOneToOne) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 50; ++trial) {
    PairingInput in;
    const int ns = std::uniform_int_distribution<int>(1, 60)(rng);
    const int nt = std::uniform_int_distribution<int>(1, 60)(rng);
    for (int k = 0; k < ns; ++k) {
      in.src_words.push_back("w" + std::to_string(k));
      in.src_freq.push_back(double(rng() % 20));
    }
    for (int k = 0; k < nt; ++k) {
      in.tgt_words.push_back("w" + std::to_string(k * 2));
      in.tgt_freq.push_back(double(rng() % 20));
    }
    for (int k = 0; k < 3 * ns; ++k)
      in.align_prob.emplace_back(int(rng() % ns), int(rng() % nt), (rng() % 1000) / 1000.0);
    const auto pairs = pair_words(in);
    std::set<int> srcs, tgts;
    for (const auto& p : pairs) {
      EXPECT_TRUE(srcs.insert(p.src_id).second);
      EXPECT_TRUE(tgts.insert(p.tgt_id).second);
      if (p.category == PairCategory::lm) {
        EXPECT_GE(p.score, in.threshold);
      }
      if (p.category == PairCategory::wf) {
        EXPECT_EQ(in.src_words[p.src_id], in.tgt_words[p.tgt_id]);
      }
    }
    EXPECT_EQ(pairs.size(), size_t(std::min(ns, nt)));  // nothing skipped: the smaller side fills
  }
}

TEST(PairingWords, RejectsBadInput) {
  auto in = small_pairing_input();
  in.align_prob.emplace_back(99, 0, 0.5);
  EXPECT_THROW(pair_words(in), std::invalid_argument);
  in = small_pairing_input();
  in.src_freq.pop_back();
  EXPECT_THROW(pair_words(in), std::invalid_argument);
}

TEST(PairingFile, WriteReadRoundTrip) {
  const auto in = small_pairing_input();
  auto pairs = pair_words(in);
  pairs[0].score = 1.0 / 3.0;  // needs all digits to round-trip
  const fs::path dir = temp_dir("pairs");
  write_pairs((dir / "pairs.tsv").string(), pairs, in);
  const auto lines = read_lines(dir / "pairs.tsv");
  ASSERT_EQ(lines.size(), pairs.size() + 1);
  EXPECT_EQ(lines[0], "source\ttarget\tcategory\tscore");
  EXPECT_EQ(lines[1].substr(0, 10), "the\tdas\tlm");
  const auto back = read_pairs((dir / "pairs.tsv").string(), in);
  ASSERT_EQ(back.size(), pairs.size());
  for (size_t k = 0; k < pairs.size(); ++k) {
    EXPECT_EQ(back[k].src_id, pairs[k].src_id);
    EXPECT_EQ(back[k].tgt_id, pairs[k].tgt_id);
    EXPECT_EQ(back[k].category, pairs[k].category);
    EXPECT_EQ(back[k].score, pairs[k].score);
  }
  fs::remove_all(dir);
}

TEST(PairingFile, BadLinesNameTheLine) {
  const auto in = small_pairing_input();
  const fs::path dir = temp_dir("badpairs");
  const std::string header = "source\ttarget\tcategory\tscore\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {header + "the\tdas\tlm\t0.5\nhouse\tHaus\tlm\n", ":3:"},             // 3 fields
      {header + "the\tdas\tzz\t0.5\n", ":2:"},                              // category
      {header + "the\tdas\tlm\tabc\n", ":2:"},                              // score
      {header + "the\tnope\tlm\t0.5\n", ":2:"},                             // unknown word
      {header + "the\tdas\tlm\t0.5\nthe\tHaus\tlm\t0.4\n", ":3:"},          // paired twice
      {"wrong header\n", ":1:"},
  };
  for (const auto& [text, where] : cases) {
    std::ofstream(dir / "bad.tsv") << text;
    try {
      read_pairs((dir / "bad.tsv").string(), in);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_pairs((dir / "missing.tsv").string(), in), InputError);
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- Multi30k (slow, opt-in)

namespace {

Corpus read_gz_lowercased(const std::string& path) {
  Corpus corpus;
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return corpus;
  std::vector<char> buffer(1 << 16);
  while (gzgets(file, buffer.data(), int(buffer.size()))) {
    std::string line(buffer.data());
    for (char& ch : line)
      if (ch >= 'A' && ch <= 'Z') ch = char(ch - 'A' + 'a');
    std::istringstream in(line);
    corpus.emplace_back();
    for (std::string token; in >> token;) corpus.back().push_back(token);
  }
  gzclose(file);
  return corpus;
}

}  // namespace

// Multi30k En-De words, lowercased, as a new user would first check the aligner (about 1 s).
TEST(Ibm2Multi30k, EnglishGermanTopTranslations) {
  const std::string dir = YOKE_SHARED_DIR "/data/multi30k";
  if (!fs::exists(dir + "/train.en.gz")) GTEST_SKIP() << "no " << dir;
  const Corpus en = read_gz_lowercased(dir + "/train.en.gz");
  const Corpus de = read_gz_lowercased(dir + "/train.de.gz");
  ASSERT_EQ(en.size(), 29000u);
  ASSERT_EQ(de.size(), en.size());
  const auto start = std::chrono::steady_clock::now();
  Ibm2Aligner aligner;
  aligner.train(en, de, AlignOptions{});
  const auto links = aligner.align(en, de);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "multi30k en-de: " << en.size() << " pairs, train+align " << seconds
            << " s, tension " << aligner.tension() << "\n";
  const auto table = aligner.translation_table(0.01);
  for (const std::string word : {"man", "woman", "dog"}) {
    std::cout << "  " << word << ":";
    int shown = 0;
    for (const auto& [x, y, p] : table)
      if (x == word && shown++ < 5) std::cout << " " << y << " (" << p << ")";
    std::cout << "\n";
  }
  const auto best = table_argmax(table);
  EXPECT_EQ(best.at("man"), "mann");
  EXPECT_EQ(best.at("woman"), "frau");
  EXPECT_EQ(best.at("dog"), "hund");
}
