// `yoke prepare` on corpora of any size: streamed in chunks and written in shards, with the same
// output whatever the chunk size and thread count; its filters; and the word-cache encoder,
// which must give exactly SentencePiece's ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "file_helpers.h"
#include "text/binarized.h"
#include "text/corpus.h"
#include "text/data_meta.h"
#include "text/hold_out.h"
#include "text/prepare.h"
#include "text/synthetic.h"
#include "text/vocab.h"
#include "text/word_cache_encoder.h"

namespace fs = std::filesystem;
using namespace yoke;

namespace {

// A synthetic corpus of `train` training pairs (and small valid and test sets) in `dir`.
void write_small_corpus(const std::string& dir, size_t train, size_t valid, size_t test) {
  SyntheticOptions so;
  so.train = train;
  so.valid = valid;
  so.test = test;
  write_synthetic_corpus(dir, so);
}

// A synthetic corpus of `n` training pairs in DIR/corpus, prepared with `edit` applied to the options.
template <typename Edit>
nlohmann::json prepare_synthetic(const std::string& dir, const std::string& out, size_t n, Edit edit) {
  const std::string corpus = dir + "/corpus";
  if (!fs::exists(corpus + "/train.src")) write_small_corpus(corpus, n, 30, 20);
  PrepareOptions o = synthetic_prepare_options(corpus, dir + "/" + out);
  o.vocab_size = 200;
  o.max_len = 20;  // some pairs are dropped for length, so that dropping happens inside chunks
  edit(o);
  std::ostringstream log;
  return prepare_data(o, log);
}

void expect_same_corpus(const TokenizedCorpus& a, const TokenizedCorpus& b) {
  EXPECT_EQ(a.src_tokens, b.src_tokens);
  EXPECT_EQ(a.tgt_tokens, b.tgt_tokens);
  EXPECT_EQ(a.src_offsets, b.src_offsets);
  EXPECT_EQ(a.tgt_offsets, b.tgt_offsets);
}

}  // namespace

TEST(PrepareStream, OutputDoesNotDependOnChunkSizeOrThreads) {
  const std::string dir = test::temp_dir("prepare_chunks");
  const auto whole = prepare_synthetic(dir, "whole", 900, [](PrepareOptions& o) { o.threads = 1; });
  const auto chunked = prepare_synthetic(dir, "chunked", 900, [](PrepareOptions& o) {
    o.chunk_pairs = 7;  // many chunks, and a last one that is not full
    o.threads = 3;
  });
  EXPECT_EQ(whole, chunked);
  ASSERT_GT(whole["splits"]["train"]["dropped_long"].get<size_t>(), 0u);
  for (const char* f : {"spm.model", "train.bin", "valid.bin", "valid.src.txt", "test.toy.tgt.txt"})
    EXPECT_TRUE(test::read_file(dir + "/whole/" + f) == test::read_file(dir + "/chunked/" + f)) << f << " differs";
}

TEST(PrepareStream, ShardsHoldTheSamePairsInOrder) {
  const std::string dir = test::temp_dir("prepare_shards");
  const auto one = prepare_synthetic(dir, "one", 900, [](PrepareOptions&) {});
  const auto sharded = prepare_synthetic(dir, "sharded", 900, [](PrepareOptions& o) { o.shard_pairs = 50; });
  const size_t kept = one["splits"]["train"]["kept"];
  ASSERT_GT(kept, 150u);
  const auto shards = sharded["splits"]["train"]["shards"].get<std::vector<std::string>>();
  ASSERT_EQ(shards.size(), (kept + 49) / 50);
  EXPECT_EQ(shards.front(), "train.000.bin");
  EXPECT_EQ(sharded["splits"]["train"]["kept"], kept);
  EXPECT_FALSE(fs::exists(dir + "/sharded/train.bin"));
  EXPECT_EQ(DataMeta::read(dir + "/sharded").train_files().size(), shards.size());

  // The shards, one after the other, are the one-file corpus.
  TokenizedCorpus joined;
  for (const auto& f : shards) {
    const TokenizedCorpus c = load_binarized(dir + "/sharded/" + f);
    EXPECT_LE(c.size(), 50u);
    for (size_t i = 0; i < c.size(); ++i)
      joined.add(std::vector<int>(c.src(i), c.src(i) + c.src_len(i)), std::vector<int>(c.tgt(i), c.tgt(i) + c.tgt_len(i)));
  }
  expect_same_corpus(joined, load_binarized(dir + "/one/train.bin"));
  // One shard is enough: it keeps the one-file name.
  const auto big = prepare_synthetic(dir, "big_shard", 900, [](PrepareOptions& o) { o.shard_pairs = 100000; });
  EXPECT_FALSE(big["splits"]["train"].contains("shards"));
  EXPECT_TRUE(test::read_file(dir + "/big_shard/train.bin") == test::read_file(dir + "/one/train.bin"));
}

TEST(PrepareStream, DuplicatesAndLengthRatiosAreDroppedAndCounted) {
  const std::string dir = test::temp_dir("prepare_filters");
  write_small_corpus(dir + "/corpus", 300, 20, 10);
  auto src = read_lines(dir + "/corpus/train.src"), tgt = read_lines(dir + "/corpus/train.tgt");
  const size_t n = src.size();
  for (size_t i = 0; i < 50; ++i) {  // 50 repeated pairs, and 10 that repeat one side only
    src.push_back(src[i]);
    tgt.push_back(tgt[i]);
    if (i < 10) {
      src.push_back(src[i]);
      tgt.push_back(tgt[i + 1] + " extra");
    }
  }
  // A one-word source with a long target: a length ratio far above 3.
  src.push_back("Ron");
  tgt.push_back("kasipe kasipe kasipe kasipe kasipe kasipe kasipe kasipe");
  // Repeats: 50 planted ones, and any the generator made itself.
  const std::set<std::pair<std::string, std::string>> distinct = [&] {
    std::set<std::pair<std::string, std::string>> d;
    for (size_t i = 0; i < src.size(); ++i) d.emplace(src[i], tgt[i]);
    return d;
  }();
  ASSERT_GE(src.size() - distinct.size(), 50u);
  std::ofstream s(dir + "/train.src"), t(dir + "/train.tgt");
  for (size_t i = 0; i < src.size(); ++i) s << src[i] << "\n", t << tgt[i] << "\n";
  s.close();
  t.close();

  PrepareOptions o = synthetic_prepare_options(dir + "/corpus", dir + "/prep");
  o.train_src = dir + "/train.src";
  o.train_tgt = dir + "/train.tgt";
  o.vocab_size = 200;
  o.dedup = true;
  o.max_ratio = 3;
  o.chunk_pairs = 16;  // duplicates are found across chunks
  std::ostringstream log;
  const auto meta = prepare_data(o, log);
  const auto& train = meta["splits"]["train"];
  EXPECT_EQ(train["read"], n + 60 + 1);
  EXPECT_EQ(train["dropped_duplicate"], src.size() - distinct.size());
  EXPECT_GE(train["dropped_ratio"].get<size_t>(), 1u);
  EXPECT_EQ(train["kept"].get<size_t>() + train["dropped_duplicate"].get<size_t>() + train["dropped_ratio"].get<size_t>() +
                train["dropped_long"].get<size_t>() + train["dropped_empty"].get<size_t>(),
            train["read"].get<size_t>());
  EXPECT_NE(log.str().find("duplicate pairs dropped (--dedup)"), std::string::npos) << log.str();
  // Every kept pair is within the ratio.
  const TokenizedCorpus c = load_binarized(dir + "/prep/train.bin");
  for (size_t i = 0; i < c.size(); ++i) {
    const double a = double(c.src_len(i)), b = double(c.tgt_len(i));
    EXPECT_LE(std::max(a, b), 3 * std::min(a, b)) << "pair " << i;
  }
  // Without the filters nothing is dropped for them.
  o.out_dir = dir + "/plain";
  o.dedup = false;
  o.max_ratio = 0;
  const auto plain = prepare_data(o, log);
  EXPECT_EQ(plain["splits"]["train"]["dropped_duplicate"], 0);
  EXPECT_EQ(plain["splits"]["train"]["dropped_ratio"], 0);
}

TEST(PrepareStream, HeldOutPairsAreDrawnReproduciblyAndKeptOutOfTraining) {
  const std::string dir = test::temp_dir("prepare_hold_out");
  write_small_corpus(dir + "/corpus", 400, 20, 10);
  auto src = read_lines(dir + "/corpus/train.src"), tgt = read_lines(dir + "/corpus/train.tgt");
  // A blank pair (never drawn, never numbered) and a repeat of pair 5's source with another target.
  src.insert(src.begin() + 3, "");
  tgt.insert(tgt.begin() + 3, "ignored");
  src.push_back(src[5]);
  tgt.push_back("a target of its own");
  {
    std::ofstream s(dir + "/train.src"), t(dir + "/train.tgt");
    for (size_t i = 0; i < src.size(); ++i) s << src[i] << "\n", t << tgt[i] << "\n";
  }
  const size_t non_blank = src.size() - 1;

  // The draw: n distinct pairs in file order, the same for the same seed, another for another seed.
  const HeldOutPairs a = draw_held_out(dir + "/train.src", dir + "/train.tgt", 60, 7);
  const HeldOutPairs b = draw_held_out(dir + "/train.src", dir + "/train.tgt", 60, 7);
  const HeldOutPairs c = draw_held_out(dir + "/train.src", dir + "/train.tgt", 60, 8);
  EXPECT_EQ(a.pairs_seen, non_blank);
  ASSERT_EQ(a.index.size(), 60u);
  EXPECT_EQ(a.index, b.index);
  EXPECT_NE(a.index, c.index);
  EXPECT_TRUE(std::is_sorted(a.index.begin(), a.index.end()));
  EXPECT_EQ(std::set<uint64_t>(a.index.begin(), a.index.end()).size(), 60u);
  for (size_t k = 0; k < a.index.size(); ++k) {
    const size_t line = a.index[k] >= 3 ? a.index[k] + 1 : a.index[k];  // past the blank pair
    EXPECT_EQ(a.src[k], src[line]);
    EXPECT_EQ(a.tgt[k], tgt[line]);
  }
  // Uniform: over many seeds, the first and the last pair are drawn about as often (n/N = 0.15 each).
  int first = 0, last = 0;
  uint64_t seed_with_repeat = 0;  // a seed that draws pair 5 or its repeat, whose source they share
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const HeldOutPairs d = draw_held_out(dir + "/train.src", dir + "/train.tgt", 60, seed);
    first += d.index.front() == 0;
    last += d.index.back() == non_blank - 1;
    if (!seed_with_repeat && std::count(d.src.begin(), d.src.end(), src[5]) == 1) seed_with_repeat = seed;
  }
  ASSERT_NE(seed_with_repeat, 0u);
  // Binomial(400, 0.15): mean 60, SD 7.1; five SDs either side.
  EXPECT_NEAR(first, 60, 36);
  EXPECT_NEAR(last, 60, 36);
  EXPECT_THROW(draw_held_out(dir + "/train.src", dir + "/train.tgt", non_blank, 1), InputError);

  // prepare: the pairs follow the test set of the same name; no held-out sentence is in training.
  PrepareOptions o = synthetic_prepare_options(dir + "/corpus", dir + "/prep");
  o.train_src = dir + "/train.src";
  o.train_tgt = dir + "/train.tgt";
  o.vocab_size = 200;
  o.hold_out_name = "toy";
  o.hold_out_pairs = 60;
  o.hold_out_seed = seed_with_repeat;
  const HeldOutPairs drawn = draw_held_out(dir + "/train.src", dir + "/train.tgt", 60, seed_with_repeat);
  std::ostringstream log;
  const auto meta = prepare_data(o, log);
  const auto test_src = read_lines(dir + "/prep/test.toy.src.txt"), toy = read_lines(dir + "/corpus/test.src");
  ASSERT_EQ(test_src.size(), toy.size() + 60);
  EXPECT_TRUE(std::equal(toy.begin(), toy.end(), test_src.begin()));
  EXPECT_TRUE(std::equal(drawn.src.begin(), drawn.src.end(), test_src.begin() + toy.size()));
  EXPECT_EQ(meta["splits"]["test.toy"]["held_out"]["from_file"], toy.size());
  const auto& train = meta["splits"]["train"];
  // Pair 5's source was repeated, and one of the two pairs was drawn: the other is left out too.
  const size_t overlap = train["held_out"]["dropped_overlap"];
  EXPECT_GE(overlap, 1u);
  EXPECT_EQ(train["kept"].get<size_t>() + 60 + overlap + train["dropped_long"].get<size_t>() +
                train["dropped_empty"].get<size_t>(),
            train["read"].get<size_t>());
  // Decode the training corpus and look for every held-out sentence.
  const Vocab sv = Vocab::load(dir + "/prep/spm.model");
  const TokenizedCorpus corpus = load_binarized(dir + "/prep/train.bin");
  std::set<std::string> trained_src, trained_tgt;
  for (size_t i = 0; i < corpus.size(); ++i) {
    trained_src.insert(sv.decode(std::vector<int>(corpus.src(i), corpus.src(i) + corpus.src_len(i))));
    trained_tgt.insert(sv.decode(std::vector<int>(corpus.tgt(i), corpus.tgt(i) + corpus.tgt_len(i))));
  }
  for (size_t k = 0; k < drawn.src.size(); ++k) {
    EXPECT_EQ(trained_src.count(sv.decode(sv.encode(drawn.src[k]))), 0u) << drawn.src[k];
    EXPECT_EQ(trained_tgt.count(sv.decode(sv.encode(drawn.tgt[k]))), 0u) << drawn.tgt[k];
  }
  EXPECT_EQ(trained_src.count(sv.decode(sv.encode(src[5]))), 0u);
  // The same seed gives the same data set byte for byte.
  o.out_dir = dir + "/again";
  prepare_data(o, log);
  for (const char* f : {"spm.model", "train.bin", "test.toy.src.txt", "test.toy.tgt.txt"})
    EXPECT_TRUE(test::read_file(dir + "/prep/" + f) == test::read_file(dir + "/again/" + f)) << f << " differs";
}

// Text chosen to break word-by-word encoding if it could break: several spaces, tabs, no-break
// and ideographic spaces, combining marks at a word's start, full-width letters, characters the
// vocabulary never saw, zero-width characters, a word of spaces only, leading/trailing spaces.
TEST(WordCacheEncoder, GivesSentencePiecesIdsOnAwkwardText) {
  const std::string dir = test::temp_dir("word_cache");
  write_small_corpus(dir, 400, 10, 10);
  VocabTrainOptions v;
  v.input_files = {dir + "/train.src", dir + "/train.tgt"};
  v.model_prefix = dir + "/spm";
  v.vocab_size = 150;
  train_vocab(v);
  const Vocab vocab = Vocab::load(dir + "/spm.model");
  WordCacheEncoder enc(vocab, 8);  // a small cache: it fills and starts over
  std::vector<std::string> lines = read_lines(dir + "/train.src");
  for (const char* awkward : {"  Ron   kasipe  ", "Ron\tkasipe\t\tRon", "Ron\xC2\xA0kasipe", "Ron\xE3\x80\x80kasipe",
                              "Ron \xCC\x81kasipe", "\xEF\xBC\xB2\xEF\xBD\x8F\xEF\xBD\x8E kasipe", "Ron \xE2\x80\x8B kasipe",
                              "\xC5\x99\xC5\x99 \xE4\xB8\xAD\xE6\x96\x87 Ron", "Ron \t kasipe", "\t", " ", "", "Ron",
                              "e\xCC\x81 caf\xC3\xA9 cafe\xCC\x81", "A\xE2\x80\x8D\xE2\x80\x8C B", "Ron\r kasipe"})
    lines.push_back(awkward);
  std::vector<int> ids;
  for (const auto& line : lines) {
    enc.encode(line, ids);
    EXPECT_EQ(ids, vocab.encode(line)) << "'" << line << "'";
  }
  EXPECT_GT(enc.hits(), 0u);
  EXPECT_GT(enc.misses(), 8u);
}

// Every sentence of Multi30k's four languages, with a vocabulary of English and German: French
// and Czech characters it never saw come out as unknown pieces, and must do so the same way.
TEST(WordCacheEncoder, GivesSentencePiecesIdsOnEveryMulti30kSentence) {
  const std::string data = std::string(YOKE_SHARED_DIR) + "/data/multi30k/";
  if (!fs::exists(data + "train.en.gz")) GTEST_SKIP() << "no Multi30k at " << data;
  const std::string dir = test::temp_dir("word_cache_m30k");
  VocabTrainOptions v;
  v.input_files = {data + "train.en.gz", data + "train.de.gz"};
  v.model_prefix = dir + "/spm";
  v.vocab_size = 8000;
  v.input_sentence_size = 20000;  // a sample, as prepare takes one; faster
  train_vocab(v);
  const Vocab vocab = Vocab::load(dir + "/spm.model");
  WordCacheEncoder enc(vocab);
  std::vector<int> ids;
  size_t checked = 0;
  for (const char* lang : {"en", "de", "fr", "cs"})
    for (const auto& line : read_lines(data + "train." + lang + ".gz")) {
      enc.encode(line, ids);
      ASSERT_EQ(ids, vocab.encode(line)) << lang << ": '" << line << "'";
      ++checked;
    }
  EXPECT_EQ(checked, 4u * 29000u);
}
