// Perplexity by frequency band (lm/frequency_bands.h, `yoke eval-lm --bands`): counts fall in the
// band whose edges hold them, end of line has its own row, the rows together are exactly the
// perplexity's predictions and likelihood, and the command names the data directory it cannot
// use (missing, or prepared with another vocabulary).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "tiny_model.h"
#include "config/config.h"
#include "lm/frequency_bands.h"
#include "lm/perplexity.h"
#include "store/model_store.h"
#include "text/binarized.h"
#include "text/corpus.h"
#include "text/vocab.h"
#include "util/error.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

// Ids 0..14 with these training counts; id 3 is end of line.
TrainingCounts edge_counts() {
  TrainingCounts c;
  c.dir = "counts";
  c.by_id = {0, 0, 0, 500, 0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 123456};
  c.lines = 500;
  for (int64_t n : c.by_id) c.tokens += n;
  return c;
}

// Sums in the order given, in double: what Perplexity::nll and FrequencyBands::nll() do.
double sequential_sum(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x);
  return s;
}

}  // namespace

TEST(FrequencyBands, ParsesEdgesAndRejectsWhatIsNotAnIncreasingListOfCounts) {
  EXPECT_EQ(parse_band_edges(default_band_edges), (std::vector<int64_t>{1, 10, 100, 1000, 10000}));
  EXPECT_EQ(parse_band_edges("5"), (std::vector<int64_t>{5}));
  for (const char* bad : {"", "10,1", "1,1", "0,10", "-1,10", "1,,10", "1,10,", "1;10", "ten", "1.5"})
    EXPECT_THROW(parse_band_edges(bad), InputError) << bad;
}

TEST(FrequencyBands, CountsAtAnEdgeBelongToTheBandAboveIt) {
  const FrequencyBands b(edge_counts(), parse_band_edges(default_band_edges), Vocab::eos);
  const auto& rows = b.rows();
  ASSERT_EQ(rows.size(), 7u);  // 0, 1-9, 10-99, 100-999, 1000-9999, 10000+, end of line
  const std::vector<std::string> labels = {"0", "1-9", "10-99", "100-999", "1000-9999", "10000+", "end of line"};
  for (size_t k = 0; k < labels.size(); ++k) EXPECT_EQ(rows[k].label, labels[k]);
  EXPECT_EQ(rows[0].min_count, 0);
  EXPECT_EQ(rows[0].max_count, 0);
  EXPECT_EQ(rows[1].min_count, 1);
  EXPECT_EQ(rows[1].max_count, 9);
  EXPECT_EQ(rows[5].min_count, 10000);
  EXPECT_EQ(rows[5].max_count, -1);  // no upper end
  EXPECT_EQ(rows[6].min_count, 500);  // end of line: one per training line
  // id → row, by the counts of edge_counts(): each edge and the count just below it.
  const std::map<int, size_t> expected = {{0, 0},  {1, 0},  {2, 0},  {3, 6},  {4, 0},  {5, 1},  {6, 1}, {7, 2},
                                          {8, 2},  {9, 3},  {10, 3}, {11, 4}, {12, 4}, {13, 5}, {14, 5}};
  for (const auto& [id, row] : expected) EXPECT_EQ(b.row_of(id), row) << "id " << id;
  EXPECT_THROW(b.row_of(15), InputError);
  EXPECT_THROW(b.row_of(-1), InputError);

  // One edge above 1: the first band holds the unseen and the rare alike.
  const FrequencyBands two(edge_counts(), {100}, Vocab::eos);
  ASSERT_EQ(two.rows().size(), 3u);
  EXPECT_EQ(two.rows()[0].label, "0-99");
  EXPECT_EQ(two.rows()[1].label, "100+");
  EXPECT_EQ(two.row_of(8), 0u);
  EXPECT_EQ(two.row_of(9), 1u);
}

TEST(FrequencyBands, RowsAddUpToEveryPredictionAndTheirTotal) {
  FrequencyBands b(edge_counts(), parse_band_edges(default_band_edges), Vocab::eos);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> id(0, 14);
  std::uniform_real_distribution<float> nll(0.f, 12.f);
  std::vector<int32_t> ids;
  std::vector<float> nlls;
  for (int i = 0; i < 5000; ++i) {
    ids.push_back(id(rng));
    nlls.push_back(nll(rng));
  }
  b.add(ids, nlls);
  EXPECT_EQ(b.tokens(), 5000);
  // The total is added in the order given: the same number as a sequential sum, bit for bit.
  EXPECT_EQ(b.nll(), sequential_sum(nlls));
  int64_t tokens = 0, types = 0;
  double nll_sum = 0;
  for (const auto& r : b.rows()) {
    tokens += r.tokens;
    types += r.types;
    nll_sum += r.nll;
    if (r.tokens > 0) YOKE_EXPECT_NEAR(r.ppl(), std::exp(r.nll / double(r.tokens)), 1e-12 * r.ppl());
  }
  EXPECT_EQ(tokens, 5000);
  EXPECT_EQ(types, 15);  // every id was drawn, and each lies in exactly one row
  // The bands add the same doubles grouped differently. A sum of n terms in double errs by at most
  // n · 2^-53 · Σ|x|: 5000 · 1.1e-16 · 60000 ≈ 3e-8 for each way of adding, 1e-6 leaves room.
  YOKE_EXPECT_NEAR(nll_sum, b.nll(), 1e-6);
  EXPECT_EQ(b.rows()[6].tokens, std::count(ids.begin(), ids.end(), Vocab::eos));
}

TEST(LmBands, PerplexityRecordsEveryPredictionAndItsSumIsTheNll) {
  at::manual_seed(3);
  auto model = build_model(tiny_lm(40));
  const std::vector<std::vector<int>> lines = {{4, 5, 6}, {7, 8}, {9, 10, 11, 12, 13}, {4, 4, 39}};
  const std::vector<int64_t> words = {2, 1, 3, 3};
  std::multiset<int32_t> expected_targets;
  for (const auto& l : lines) {
    expected_targets.insert(l.begin(), l.end());
    expected_targets.insert(Vocab::eos);
  }
  TrainingCounts counts;
  counts.dir = "counts";
  counts.by_id.assign(40, 0);
  for (int id = 0; id < 40; ++id) counts.by_id[size_t(id)] = id * id * 10;  // every band gets some ids
  counts.lines = 3;
  for (auto [block, stride] : std::vector<std::pair<int, int>>{{0, 0}, {4, 4}, {6, 2}}) {
    const Perplexity p = lm_perplexity(*model, lines, words, block, stride);
    ASSERT_EQ(int64_t(p.targets.size()), p.subwords) << block;
    ASSERT_EQ(p.token_nll.size(), p.targets.size());
    EXPECT_EQ(std::multiset<int32_t>(p.targets.begin(), p.targets.end()), expected_targets) << block;
    // The same floats added in the same order: the same double.
    EXPECT_EQ(sequential_sum(p.token_nll), p.nll) << block;
    FrequencyBands bands(counts, parse_band_edges(default_band_edges), Vocab::eos);
    bands.add(p.targets, p.token_nll);
    EXPECT_EQ(bands.nll(), p.nll) << block;
    EXPECT_EQ(bands.tokens(), p.subwords);
    EXPECT_EQ(std::exp(bands.nll() / double(bands.tokens())), p.per_subword()) << block;
    int64_t tokens = 0;
    for (const auto& r : bands.rows()) tokens += r.tokens;
    EXPECT_EQ(tokens, p.subwords);
    EXPECT_EQ(bands.rows().back().tokens, int64_t(lines.size()));  // one end of line per line
  }
}

namespace {

const fs::path& bands_lm_data() {
  static const fs::path dir = [] {
    const auto corpus = work_dir() / "corpus";
    data_dir();  // writes the synthetic corpus
    const auto d = work_dir() / "bands-lm-data";
    EXPECT_EQ(run({YOKE_BINARY, "prepare", "--lm", "--train", (corpus / "train.tgt").string(), "--valid",
                   (corpus / "valid.tgt").string(), "--test", "toy:" + (corpus / "test.tgt").string(), "--vocab-size",
                   "150", "--out", d.string()},
                  work_dir() / "bands-prepare.log"),
              0)
        << slurp(work_dir() / "bands-prepare.log");
    return d;
  }();
  return dir;
}

// A small sentence-level LM trained on bands_lm_data(), once per process.
const fs::path& bands_lm() {
  static const fs::path dir = train_into("bands-lm", [](const fs::path& d) {
    return std::vector<std::string>{YOKE_BINARY, "train", "--data", bands_lm_data().string(), "--save_dir", d.string(),
                                    "--task", "lm", "--d_model", "32", "--heads", "2", "--ffn_dim", "64",
                                    "--decoder_layers", "1", "--max_tokens", "512", "--max_updates", "30",
                                    "--valid_interval", "30", "--threads", "1", "--lr", "0.003", "--warmup", "10"};
  });
  return dir;
}

std::vector<std::string> eval_bands(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> a = {YOKE_BINARY, "eval-lm", "--model", bands_lm().string(), "--text",
                                (bands_lm_data() / "test.toy.txt").string(), "--threads", "1", "--bands"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

TEST(LmBandsCli, BandsOfATrainedModelCoverEveryPredictionOnce) {
  const auto j = nlohmann::json::parse(output_of(eval_bands({"--json"})));
  const auto& bands = j.at("bands");
  ASSERT_EQ(bands.size(), 7u);
  EXPECT_EQ(bands.back().at("label"), "end of line");
  EXPECT_TRUE(bands[5].at("max_count").is_null());

  // The counts are of the training text the data directory describes.
  const auto meta = nlohmann::json::parse(slurp(bands_lm_data() / "meta.json"));
  EXPECT_EQ(j.at("train_counts").at("subwords"), meta.at("splits").at("train").at("tgt_tokens"));
  EXPECT_EQ(j.at("train_counts").at("lines"), meta.at("splits").at("train").at("kept"));

  // Every prediction in exactly one row; the rows' likelihood is the perplexity's.
  int64_t tokens = 0;
  double nll = 0;
  for (const auto& b : bands) {
    tokens += b.at("tokens").get<int64_t>();
    nll += b.at("nll_sum").get<double>();
  }
  EXPECT_EQ(tokens, j.at("subwords").get<int64_t>());
  // The rows add the same doubles grouped by band instead of in scoring order: n terms summed two
  // ways differ by at most about n · 2^-53 · Σ|x|, about 1e-13 relative for the few hundred
  // predictions here. 1e-9 relative is far above that and far below one token's share of the total.
  YOKE_EXPECT_NEAR(nll, j.at("nll_nats").get<double>(), 1e-9 * j.at("nll_nats").get<double>());
  EXPECT_EQ(bands.back().at("tokens").get<int64_t>(), j.at("lines").get<int64_t>());

  // The same bands recomputed here: the text encoded with the model's vocabulary, each subword's
  // count read from the training file, put in a band by the default edges.
  const Vocab vocab = Vocab::load((bands_lm() / "spm.model").string());
  const TokenizedCorpus train = load_binarized((bands_lm_data() / "train.bin").string());
  std::map<int, int64_t> count;
  for (int32_t id : train.tgt_tokens) ++count[id];
  const std::vector<int64_t> edges = {1, 10, 100, 1000, 10000};
  std::vector<int64_t> expected(7, 0);
  for (const auto& line : read_lines((bands_lm_data() / "test.toy.txt").string())) {
    if (is_blank(line)) continue;
    for (int id : vocab.encode(line)) {
      size_t k = 0;
      while (k < edges.size() && count[id] >= edges[k]) ++k;
      ++expected[k];
    }
    ++expected[6];
  }
  for (size_t k = 0; k < 7; ++k) EXPECT_EQ(bands[k].at("tokens").get<int64_t>(), expected[k]) << k;

  // --bands changes nothing else: the same perplexity, bit for bit, as without it.
  auto plain = eval_bands({"--json"});
  plain.erase(std::find(plain.begin(), plain.end(), "--bands"));
  const auto p = nlohmann::json::parse(output_of(plain));
  EXPECT_FALSE(p.contains("bands"));
  EXPECT_EQ(p.at("ppl_subword").get<double>(), j.at("ppl_subword").get<double>());
  EXPECT_EQ(p.at("nll_nats").get<double>(), j.at("nll_nats").get<double>());

  // The table: one line per row and the overall one, which is ppl/subword.
  const auto table = output_of(eval_bands());
  EXPECT_NE(table.find("end of line"), std::string::npos) << table;
  EXPECT_NE(table.find("10000+"), std::string::npos) << table;
  char ppl[32];
  std::snprintf(ppl, sizeof ppl, "%.3f", j.at("ppl_subword").get<double>());
  std::string all_row;
  for (const auto& l : lines_of(table))
    if (l.rfind("  all ", 0) == 0) all_row = l;
  EXPECT_NE(all_row.find(ppl), std::string::npos) << table;
}

TEST(LmBandsCli, CustomEdgesGiveTheirBands) {
  const auto j = nlohmann::json::parse(output_of(eval_bands({"--json", "--band-edges", "2,50"})));
  const auto& bands = j.at("bands");
  ASSERT_EQ(bands.size(), 4u);
  EXPECT_EQ(bands[0].at("label"), "0-1");
  EXPECT_EQ(bands[1].at("label"), "2-49");
  EXPECT_EQ(bands[2].at("label"), "50+");
  EXPECT_EQ(j.at("train_counts").at("band_edges"), nlohmann::json::array({2, 50}));
  const auto log = work_dir() / "bands-bad-edges.log";
  EXPECT_EQ(run(eval_bands({"--band-edges", "10,5"}), log), 2);
  EXPECT_NE(slurp(log).find("--band-edges"), std::string::npos) << slurp(log);
}

TEST(LmBandsCli, AMissingDataDirectoryIsNamedWithTheWayOut) {
  bands_lm();
  // The model's config.data moved away: the error names it and --train-counts-from.
  const auto moved = work_dir() / "bands-lm-data.moved";
  fs::rename(bands_lm_data(), moved);
  const auto log = work_dir() / "bands-missing.log";
  const int rc = run(eval_bands(), log);
  fs::rename(moved, bands_lm_data());
  EXPECT_EQ(rc, 2);
  const auto err = slurp(log);
  EXPECT_NE(err.find(bands_lm_data().string() + ": not found"), std::string::npos) << err;
  EXPECT_NE(err.find("--train-counts-from DIR"), std::string::npos) << err;

  // Named explicitly and missing: the same, naming that directory.
  const auto nowhere = (work_dir() / "no-such-data").string();
  EXPECT_EQ(run(eval_bands({"--train-counts-from", nowhere}), log), 2);
  EXPECT_NE(slurp(log).find(nowhere + ": not found"), std::string::npos) << slurp(log);

  // Named explicitly and there: the same bands as through config.data.
  const auto a = nlohmann::json::parse(output_of(eval_bands({"--json"})));
  const auto b =
      nlohmann::json::parse(output_of(eval_bands({"--json", "--train-counts-from", bands_lm_data().string()})));
  EXPECT_EQ(a.at("bands"), b.at("bands"));
}

TEST(LmBandsCli, DataPreparedWithAnotherVocabularyIsRefused) {
  // The same text prepared again with a smaller vocabulary: its ids are other subwords.
  const auto corpus = work_dir() / "corpus";
  bands_lm();
  const auto other = work_dir() / "bands-lm-data-v120";
  ASSERT_EQ(run({YOKE_BINARY, "prepare", "--lm", "--train", (corpus / "train.tgt").string(), "--valid",
                 (corpus / "valid.tgt").string(), "--vocab-size", "120", "--out", other.string()},
                work_dir() / "bands-prepare-v120.log"),
            0)
      << slurp(work_dir() / "bands-prepare-v120.log");
  const auto log = work_dir() / "bands-other-vocab.log";
  EXPECT_EQ(run(eval_bands({"--train-counts-from", other.string()}), log), 2);
  const auto err = slurp(log);
  EXPECT_NE(err.find((other / "spm.model").string() + ": is not the vocabulary of the model"), std::string::npos)
      << err;
  EXPECT_NE(err.find("--train-counts-from DIR"), std::string::npos) << err;
}
