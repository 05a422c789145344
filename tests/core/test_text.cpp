// Tests of the text pipeline: corpus reading, vocabulary, binarized storage, batching, the
// synthetic corpus and `yoke prepare`.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "file_helpers.h"
#include "batch/batching.h"
#include "text/binarized.h"
#include "text/corpus.h"
#include "text/prepare.h"
#include "text/synthetic.h"
#include "text/vocab.h"
#include "text/vocab_files.h"
#include "util/error.h"

namespace fs = std::filesystem;
using namespace yoke;

namespace {

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = fs::temp_directory_path() / ("yoke_text_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(stamp) + "_" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(f);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

using test::input_error_message;

// A small synthetic corpus shared by the vocabulary and prepare tests.
struct SmallCorpus {
  TempDir dir;
  SmallCorpus() {
    SyntheticOptions o;
    o.train = 1500;
    o.valid = 50;
    o.test = 40;
    write_synthetic_corpus(dir.str(), o);
  }
};

}  // namespace

// ---------------------------------------------------------------------------------- Corpus

TEST(CorpusTest, GzipAndPlainGiveSameLines) {
  TempDir dir;
  const std::string text = "first line\r\nzweite Zeile \xc3\xa4\xc3\xb6\n\nlast without newline";
  write_file(dir.file("a.txt"), text);
  write_gz(dir.file("a.txt.gz"), text);
  write_gz(dir.file("gzip_without_gz_name"), text);
  const std::vector<std::string> expected = {"first line", "zweite Zeile \xc3\xa4\xc3\xb6", "",
                                             "last without newline"};
  EXPECT_EQ(read_lines(dir.file("a.txt")), expected);
  EXPECT_EQ(read_lines(dir.file("a.txt.gz")), expected);
  EXPECT_EQ(read_lines(dir.file("gzip_without_gz_name")), expected);
}

TEST(CorpusTest, EmptyFileAndBom) {
  TempDir dir;
  write_file(dir.file("empty"), "");
  EXPECT_TRUE(read_lines(dir.file("empty")).empty());
  write_file(dir.file("bom"), "\xEF\xBB\xBFhello\nworld\n");
  EXPECT_EQ(read_lines(dir.file("bom")), (std::vector<std::string>{"hello", "world"}));
}

TEST(CorpusTest, LongFileAcrossReadChunks) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "line number " + std::to_string(i) + "\n";
  write_gz(dir.file("long.gz"), text);
  const auto lines = read_lines(dir.file("long.gz"));
  ASSERT_EQ(lines.size(), 100000u);
  EXPECT_EQ(lines[54321], "line number 54321");
  EXPECT_EQ(lines.back(), "line number 99999");
}

TEST(CorpusTest, MissingFileNamesPath) {
  TempDir dir;
  const std::string path = dir.file("nope.txt");
  const std::string msg = input_error_message([&] { read_lines(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
}

TEST(CorpusTest, InvalidUtf8NamesFileAndLine) {
  TempDir dir;
  const std::string path = dir.file("bad.txt");
  write_file(path, "ok\nstill ok \xc3\xa9\nbad \xff here\n");
  const std::string msg = input_error_message([&] { read_lines(path); });
  EXPECT_NE(msg.find(path + ":3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("invalid UTF-8 at byte 5"), std::string::npos) << msg;

  write_gz(dir.file("bad.gz"), "a\nb\nc\n\xed\xa0\x80\n");  // surrogate on line 4
  const std::string gz_msg = input_error_message([&] { read_lines(dir.file("bad.gz")); });
  EXPECT_NE(gz_msg.find("bad.gz:4:"), std::string::npos) << gz_msg;
}

// Text whose lines end in CR alone reads as one line: named, with the fix, instead of reaching
// SentencePiece as one enormous sentence. Windows' CR LF still reads as line ends.
TEST(CorpusTest, CarriageReturnsInsideALineAreNamed) {
  TempDir dir;
  write_file(dir.file("crlf.txt"), "one\r\ntwo\r\n");
  EXPECT_EQ(read_lines(dir.file("crlf.txt")), (std::vector<std::string>{"one", "two"}));
  write_file(dir.file("cr.txt"), "one\rtwo\rthree\r");
  const std::string msg = input_error_message([&] { read_lines(dir.file("cr.txt")); });
  EXPECT_NE(msg.find(dir.file("cr.txt") + ":1:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("carriage return inside the line at byte 4"), std::string::npos) << msg;
}

// A line longer than kMaxLineBytes is an error at that line, found while reading it: the reader
// never holds more than the limit and a read chunk (a 3 MiB line used to take 3 MiB and more).
TEST(CorpusTest, ALineLongerThanTheLimitIsNamedBeforeItFillsMemory) {
  TempDir dir;
  write_file(dir.file("long.txt"), "short\n" + std::string(kMaxLineBytes + 10, 'a') + "\nafter\n");
  const std::string msg = input_error_message([&] { read_lines(dir.file("long.txt")); });
  EXPECT_NE(msg.find(dir.file("long.txt") + ":2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("line longer than 1 MiB"), std::string::npos) << msg;
  write_file(dir.file("fits.txt"), std::string(kMaxLineBytes - 1, 'b') + "\n");
  EXPECT_EQ(read_lines(dir.file("fits.txt")).front().size(), kMaxLineBytes - 1);
}

TEST(CorpusTest, StrictUtf8Validation) {
  EXPECT_EQ(find_invalid_utf8("plain ascii text that is long enough"), std::string::npos);
  EXPECT_EQ(find_invalid_utf8("\xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"),
            std::string::npos);                          // euro, emoji, U+10FFFF
  EXPECT_EQ(find_invalid_utf8("ab\xc0\xaf"), 2u);        // overlong '/'
  EXPECT_EQ(find_invalid_utf8("\xe0\x80\xaf"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(find_invalid_utf8("\xf0\x80\x80\xaf"), 0u);  // overlong, 4 bytes
  EXPECT_EQ(find_invalid_utf8("x\xed\xbf\xbf"), 1u);     // surrogate U+DFFF
  EXPECT_EQ(find_invalid_utf8("\xf4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(find_invalid_utf8("\xf5\x80\x80\x80"), 0u);  // invalid lead byte
  EXPECT_EQ(find_invalid_utf8("abcdefghij\xc3"), 10u);   // truncated at the end
  EXPECT_EQ(find_invalid_utf8("\x80"), 0u);              // stray continuation byte
}

TEST(CorpusTest, UnequalLineCountsNameBothFiles) {
  TempDir dir;
  write_file(dir.file("s.txt"), "a\nb\nc\n");
  write_file(dir.file("t.txt"), "x\ny\n");
  const std::string msg =
      input_error_message([&] { read_parallel(dir.file("s.txt"), dir.file("t.txt"), nullptr); });
  EXPECT_NE(msg.find(dir.file("s.txt")), std::string::npos) << msg;
  EXPECT_NE(msg.find(dir.file("t.txt")), std::string::npos) << msg;
  EXPECT_NE(msg.find("has 3 lines"), std::string::npos) << msg;
  EXPECT_NE(msg.find("has 2 lines"), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
}

TEST(CorpusTest, BlankPairsDroppedAndCounted) {
  TempDir dir;
  write_file(dir.file("s"), "one\n\nthree\n  \t\nfive\nsix\n");
  write_file(dir.file("t"), "eins\nzwei\n\nvier\nfunf\n \n");
  CorpusFilterStats stats;
  const ParallelText p = read_parallel(dir.file("s"), dir.file("t"), &stats);
  EXPECT_EQ(p.src, (std::vector<std::string>{"one", "five"}));
  EXPECT_EQ(p.tgt, (std::vector<std::string>{"eins", "funf"}));
  EXPECT_EQ(stats.read, 6u);
  EXPECT_EQ(stats.kept, 2u);
  EXPECT_EQ(stats.dropped_empty, 4u);
  EXPECT_EQ(stats.dropped_long, 0u);
}

// ----------------------------------------------------------------------------------- Vocab

TEST(VocabTest, TrainEncodeDecodeRoundTrip) {
  SmallCorpus corpus;
  VocabTrainOptions o;
  o.input_files = {corpus.dir.file("train.src"), corpus.dir.file("train.tgt")};
  o.model_prefix = corpus.dir.file("spm");
  o.vocab_size = 200;
  train_vocab(o);
  ASSERT_TRUE(fs::exists(corpus.dir.file("spm.model")));
  ASSERT_TRUE(fs::exists(corpus.dir.file("spm.vocab")));

  const Vocab v = Vocab::load(corpus.dir.file("spm.model"));
  EXPECT_EQ(v.size(), 200);
  EXPECT_EQ(v.piece(Vocab::pad), "<pad>");
  EXPECT_EQ(v.piece(Vocab::unk), "<unk>");
  EXPECT_EQ(v.piece(Vocab::bos), "<s>");
  EXPECT_EQ(v.piece(Vocab::eos), "</s>");
  EXPECT_EQ(v.piece_to_id("</s>"), Vocab::eos);

  for (const auto& line : read_lines(corpus.dir.file("valid.src"))) {
    const std::vector<int> ids = v.encode(line);
    ASSERT_FALSE(ids.empty());
    for (int id : ids) EXPECT_GT(id, Vocab::eos);  // no specials inside the text
    EXPECT_EQ(v.decode(ids), line);
    EXPECT_EQ(v.encode_pieces(line).size(), ids.size());
  }
  // decode stops at eos and skips pad/bos.
  std::vector<int> ids = v.encode("Anna");
  std::vector<int> framed = {Vocab::bos};
  framed.insert(framed.end(), ids.begin(), ids.end());
  framed.push_back(Vocab::eos);
  for (int id : v.encode("Boris")) framed.push_back(id);
  framed.push_back(Vocab::pad);
  EXPECT_EQ(v.decode(framed), "Anna");

  const Vocab copy = v;  // copies share the processor
  EXPECT_EQ(copy.encode("Anna"), ids);
  EXPECT_EQ(copy.path(), corpus.dir.file("spm.model"));
}

TEST(VocabTest, DeterministicForSeed) {
  SmallCorpus corpus;
  VocabTrainOptions o;
  o.input_files = {corpus.dir.file("train.src")};
  o.vocab_size = 150;
  o.model_prefix = corpus.dir.file("a");
  train_vocab(o);
  o.model_prefix = corpus.dir.file("b");
  train_vocab(o);
  EXPECT_TRUE(read_file(corpus.dir.file("a.vocab")) == read_file(corpus.dir.file("b.vocab")));
  // The same bytes wherever they are written (SentencePiece's own writer put the path into the
  // model): a data set prepared again from the same text keeps its vocabulary's checksum.
  EXPECT_TRUE(read_file(corpus.dir.file("a.model")) == read_file(corpus.dir.file("b.model")));
}

// A model directory records its vocabularies' checksums; a replaced file, a missing one, or a
// joint model beside the recorded separate ones (the loaders would take it) is named.
TEST(VocabFilesTest, DifferencesNameTheFile) {
  TempDir dir;
  write_file(dir.file("spm.src.model"), "source model");
  write_file(dir.file("spm.tgt.model"), "target model");
  const nlohmann::json recorded = vocab_checksums(dir.str());
  EXPECT_EQ(recorded.size(), 2u);
  EXPECT_FALSE(vocab_difference(recorded, vocab_checksums(dir.str())).has_value());
  write_file(dir.file("spm.tgt.model"), "target model, trained again");
  auto d = vocab_difference(recorded, vocab_checksums(dir.str()));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->file, "spm.tgt.model");
  EXPECT_EQ(d->detail.rfind("CRC-32 ", 0), 0u) << d->detail;
  write_file(dir.file("spm.model"), "a joint model");
  d = vocab_difference(recorded, vocab_checksums(dir.str()));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->file, "spm.model");
  EXPECT_EQ(d->detail, "not among the recorded vocabulary files");
  fs::remove(dir.file("spm.model"));
  fs::remove(dir.file("spm.src.model"));
  d = vocab_difference(recorded, vocab_checksums(dir.str()));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->file, "spm.src.model");
  EXPECT_EQ(d->detail, "missing");
}

TEST(VocabTest, UnigramModelType) {
  SmallCorpus corpus;
  VocabTrainOptions o;
  o.input_files = {corpus.dir.file("train.tgt")};
  o.vocab_size = 150;
  o.model_type = "unigram";
  o.model_prefix = corpus.dir.file("uni");
  train_vocab(o);
  const Vocab v = Vocab::load(corpus.dir.file("uni.model"));
  EXPECT_EQ(v.size(), 150);
  const std::string line = read_lines(corpus.dir.file("valid.tgt")).at(0);
  EXPECT_EQ(v.decode(v.encode(line)), line);
}

TEST(VocabTest, BadOptionsAndFilesAreInputErrors) {
  TempDir dir;
  write_file(dir.file("tiny.txt"), "ab ba\nab ab\n");
  VocabTrainOptions o;
  o.input_files = {dir.file("tiny.txt")};
  o.model_prefix = dir.file("m");
  o.model_type = "wordpiece";
  const std::string type_msg = input_error_message([&] { train_vocab(o); });
  EXPECT_NE(type_msg.find("bpe, unigram"), std::string::npos) << type_msg;

  o.model_type = "bpe";
  o.vocab_size = 5000;  // far more than two words of text can give
  const std::string size_msg = input_error_message([&] { train_vocab(o); });
  EXPECT_NE(size_msg.find("tiny.txt"), std::string::npos) << size_msg;
  EXPECT_NE(size_msg.find("vocab_size"), std::string::npos) << size_msg;

  const std::string load_msg = input_error_message([&] { Vocab::load(dir.file("tiny.txt")); });
  EXPECT_NE(load_msg.find("tiny.txt"), std::string::npos) << load_msg;
  const std::string missing_msg =
      input_error_message([&] { Vocab::load(dir.file("missing.model")); });
  EXPECT_NE(missing_msg.find("missing.model"), std::string::npos) << missing_msg;
}

// ------------------------------------------------------------------------------- Binarized

TEST(BinarizedTest, RoundTrip) {
  TempDir dir;
  TokenizedCorpus c;
  c.add({5, 6, 7}, {8, 9});
  c.add({}, {10});
  c.add({11}, {});
  c.add({12, 13, 14, 15}, {16, 17, 18, 19, 20});
  save_binarized(dir.file("c.bin"), c);
  EXPECT_FALSE(fs::exists(dir.file("c.bin.tmp")));
  const TokenizedCorpus d = load_binarized(dir.file("c.bin"));
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d.src_tokens, c.src_tokens);
  EXPECT_EQ(d.tgt_tokens, c.tgt_tokens);
  EXPECT_EQ(d.src_offsets, c.src_offsets);
  EXPECT_EQ(d.tgt_offsets, c.tgt_offsets);
  EXPECT_EQ(d.src_len(3), 4u);
  EXPECT_EQ(d.tgt_len(2), 0u);
  EXPECT_EQ(d.tgt(3)[4], 20);
  EXPECT_EQ(d.src(1) - d.src(0), 3);
}

TEST(BinarizedTest, EmptyCorpusAndTargetlessCorpus) {
  TempDir dir;
  save_binarized(dir.file("empty.bin"), TokenizedCorpus{});
  EXPECT_EQ(load_binarized(dir.file("empty.bin")).size(), 0u);

  TokenizedCorpus lm;  // language modelling: no target side at all
  lm.add({4, 5}, {});
  lm.add({6}, {});
  save_binarized(dir.file("lm.bin"), lm);
  const TokenizedCorpus d = load_binarized(dir.file("lm.bin"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(d.tgt_tokens.empty());
  EXPECT_EQ(d.tgt_len(1), 0u);
  EXPECT_EQ(d.src_len(0), 2u);
}

TEST(BinarizedTest, TruncatedOrCorruptFileIsInputError) {
  TempDir dir;
  TokenizedCorpus c;
  for (int i = 0; i < 50; ++i) c.add({4, 5, i + 6}, {7, i + 8});
  const std::string path = dir.file("c.bin");
  save_binarized(path, c);
  const std::string bytes = read_file(path);

  for (size_t keep : {size_t{0}, size_t{10}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
    write_file(path, bytes.substr(0, keep));
    const std::string msg = input_error_message([&] { load_binarized(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << "kept " << keep << ": " << msg;
  }
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  write_file(path, bad_magic);
  EXPECT_NE(input_error_message([&] { load_binarized(path); }).find("magic"), std::string::npos);

  std::string huge_count = bytes;  // a pair count far beyond the file size must not allocate
  for (int i = 16; i < 24; ++i) huge_count[i] = '\xff';
  write_file(path, huge_count);
  EXPECT_NE(input_error_message([&] { load_binarized(path); }).find(path), std::string::npos);

  write_file(path, bytes + "x");
  EXPECT_NE(input_error_message([&] { load_binarized(path); }).find(path), std::string::npos);

  const std::string missing = dir.file("missing.bin");
  EXPECT_NE(input_error_message([&] { load_binarized(missing); }).find(missing), std::string::npos);
}

// -------------------------------------------------------------------------------- Batching

namespace {

struct Lengths {
  std::vector<uint32_t> src, tgt;
};

Lengths random_lengths(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Lengths l;
  for (size_t i = 0; i < n; ++i) {
    l.src.push_back(1 + rng() % 60);
    l.tgt.push_back(1 + rng() % 70);
  }
  l.src[7] = 900;  // longer than max_tokens alone
  return l;
}

}  // namespace

TEST(BatchingTest, EveryIndexOnceAndWithinBudget) {
  const Lengths l = random_lengths(5000, 3);
  const size_t max_tokens = 800;
  for (bool shuffle : {false, true}) {
    const auto batches = make_token_batches(l.src, l.tgt, max_tokens, shuffle, 11);
    std::vector<int> seen(l.src.size(), 0);
    size_t padded = 0, real = 0;
    for (const auto& b : batches) {
      ASSERT_FALSE(b.empty());
      size_t ms = 0, mt = 0;
      for (uint32_t i : b) {
        ++seen.at(i);
        ms = std::max<size_t>(ms, l.src[i]);
        mt = std::max<size_t>(mt, l.tgt[i]);
        real += std::max(l.src[i], l.tgt[i]);
      }
      if (b.size() > 1) {
        EXPECT_LE(batch_cost(b.size(), ms, mt), max_tokens);
      }
      padded += batch_cost(b.size(), ms, mt);
    }
    for (int s : seen) ASSERT_EQ(s, 1);
    EXPECT_LT(padded, real * 1.5) << "too much padding";  // sorted batches pad little
  }
  // The over-long pair is alone.
  const auto batches = make_token_batches(l.src, l.tgt, max_tokens, false, 0);
  for (const auto& b : batches) {
    if (std::find(b.begin(), b.end(), 7u) != b.end()) {
      EXPECT_EQ(b.size(), 1u);
    }
  }
}

TEST(BatchingTest, DeterministicForSeed) {
  const Lengths l = random_lengths(2000, 5);
  const auto a = make_token_batches(l.src, l.tgt, 1000, true, 42);
  const auto b = make_token_batches(l.src, l.tgt, 1000, true, 42);
  const auto c = make_token_batches(l.src, l.tgt, 1000, true, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // Without shuffling the seed does not matter and batches come in length order.
  const auto s1 = make_token_batches(l.src, l.tgt, 1000, false, 1);
  const auto s2 = make_token_batches(l.src, l.tgt, 1000, false, 2);
  EXPECT_EQ(s1, s2);
  EXPECT_LE(l.src[s1.front().front()], l.src[s1.back().front()]);
}

TEST(BatchingTest, EdgeCases) {
  EXPECT_TRUE(make_token_batches({}, {}, 100, true, 1).empty());
  const auto one_each = make_token_batches({5, 5, 5}, {5, 5, 5}, 0, false, 1);
  EXPECT_EQ(one_each.size(), 3u);
  const auto all = make_token_batches({2, 2, 2}, {0, 0, 0}, 6, false, 1);  // empty targets
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_THROW(make_token_batches({1, 2}, {1}, 10, false, 1), std::invalid_argument);
}

// ------------------------------------------------------------------------------- Synthetic

TEST(SyntheticTest, DeterministicAndWellFormed) {
  TempDir a, b, c;
  SyntheticOptions o;
  o.train = 300;
  o.valid = 30;
  o.test = 30;
  write_synthetic_corpus(a.str(), o);
  write_synthetic_corpus(b.str(), o);
  o.seed = 8;
  write_synthetic_corpus(c.str(), o);
  for (const char* name :
       {"train.src", "train.tgt", "valid.src", "valid.tgt", "test.src", "test.tgt"}) {
    EXPECT_EQ(read_file(a.file(name)), read_file(b.file(name))) << name;
    EXPECT_NE(read_file(a.file(name)), read_file(c.file(name))) << name;
  }
  const auto src = read_lines(a.file("train.src"));
  const auto tgt = read_lines(a.file("train.tgt"));
  ASSERT_EQ(src.size(), 300u);
  ASSERT_EQ(tgt.size(), 300u);
  std::set<std::string> words;
  for (size_t i = 0; i < src.size(); ++i) {
    for (const std::string* s : {&src[i], &tgt[i]}) {
      ASSERT_FALSE(s->empty());
      EXPECT_TRUE(std::isupper(static_cast<unsigned char>((*s)[0]))) << *s;
      EXPECT_EQ(s->back(), '.') << *s;
    }
    std::istringstream ss(src[i]);
    size_t n = 0;
    for (std::string w; ss >> w; ++n) words.insert(w);
    EXPECT_GE(n, 4u) << src[i];
    EXPECT_LE(n, 20u) << src[i];
  }
  EXPECT_GT(words.size(), 150u);  // the grammar uses a real vocabulary
  // Valid sentences never occur in training.
  const std::set<std::string> train_set(src.begin(), src.end());
  for (const auto& v : read_lines(a.file("valid.src"))) EXPECT_EQ(train_set.count(v), 0u) << v;
}

// --------------------------------------------------------------------------------- Prepare

TEST(PrepareTest, SmallSyntheticCorpusJoint) {
  SmallCorpus corpus;
  const TempDir out;
  // One pair over max_len and one blank pair in valid, to see both dropped and counted.
  std::string long_line;
  for (int i = 0; i < 40; ++i) long_line += "Ron kasipe ";
  write_file(corpus.dir.file("v.src"), read_file(corpus.dir.file("valid.src")) + long_line + "\n\n");
  write_file(corpus.dir.file("v.tgt"), read_file(corpus.dir.file("valid.tgt")) + long_line + "\nx\n");
  PrepareOptions o;
  o.train_src = corpus.dir.file("train.src");
  o.train_tgt = corpus.dir.file("train.tgt");
  o.valid_src = corpus.dir.file("v.src");
  o.valid_tgt = corpus.dir.file("v.tgt");
  o.tests = {{corpus.dir.file("test.src"), corpus.dir.file("test.tgt")}};
  o.test_names = {"synth"};
  o.out_dir = out.file("prep");
  o.vocab_size = 200;
  o.max_len = 20;  // small, so that some training pairs are dropped for length
  std::ostringstream log;
  const nlohmann::json meta = prepare_data(o, log);

  for (const char* f : {"spm.model", "spm.vocab", "train.bin", "valid.bin", "valid.src.txt",
                        "valid.tgt.txt", "test.synth.src.txt", "test.synth.tgt.txt", "meta.json"})
    EXPECT_TRUE(fs::exists(out.file("prep/") + f)) << f;
  EXPECT_EQ(nlohmann::json::parse(read_file(out.file("prep/meta.json"))), meta);
  EXPECT_EQ(meta["joint"], true);
  EXPECT_EQ(meta["src_vocab_size"], 200);
  EXPECT_EQ(meta["tgt_vocab"], "spm.model");

  const auto& train = meta["splits"]["train"];
  EXPECT_EQ(train["read"], 1500);
  EXPECT_GT(train["dropped_long"].get<size_t>(), 0u);
  EXPECT_EQ(train["kept"].get<size_t>() + train["dropped_long"].get<size_t>() +
                train["dropped_empty"].get<size_t>(),
            1500u);
  const TokenizedCorpus tc = load_binarized(out.file("prep/train.bin"));
  EXPECT_EQ(tc.size(), train["kept"].get<size_t>());
  EXPECT_EQ(tc.src_tokens.size(), train["src_tokens"].get<size_t>());
  for (size_t i = 0; i < tc.size(); ++i) {
    EXPECT_LE(tc.src_len(i), 20u);
    EXPECT_LE(tc.tgt_len(i), 20u);
  }

  const auto& valid = meta["splits"]["valid"];
  EXPECT_EQ(valid["read"], 52);
  EXPECT_EQ(valid["dropped_empty"], 1);
  // Over max_len: the 80-word pair and any other; such a pair could not be decoded within the
  // model's positions, so validation and test sets are filtered like training.
  EXPECT_GE(valid["dropped_long"].get<size_t>(), 1u);
  EXPECT_EQ(valid["kept"].get<size_t>() + valid["dropped_long"].get<size_t>(), 51u);
  const TokenizedCorpus vc = load_binarized(out.file("prep/valid.bin"));
  ASSERT_EQ(vc.size(), valid["kept"].get<size_t>());
  ASSERT_GT(vc.size(), 3u);
  for (size_t i = 0; i < vc.size(); ++i) {
    EXPECT_LE(vc.src_len(i), 20u);
    EXPECT_LE(vc.tgt_len(i), 20u);
  }
  // The raw copy holds the kept lines, in their order.
  const auto kept_src = read_lines(out.file("prep/valid.src.txt"));
  const auto all_src = read_lines(corpus.dir.file("valid.src"));
  ASSERT_EQ(kept_src.size(), vc.size());
  size_t at = 0;
  for (const auto& line : kept_src) {
    while (at < all_src.size() && all_src[at] != line) ++at;
    EXPECT_LT(at++, all_src.size()) << "not a valid line, or out of order: " << line;
  }

  // The binarized valid set decodes back to its raw text copy.
  const Vocab v = Vocab::load(out.file("prep/spm.model"));
  const auto valid_tgt = read_lines(out.file("prep/valid.tgt.txt"));
  EXPECT_EQ(v.decode(std::vector<int>(vc.tgt(3), vc.tgt(3) + vc.tgt_len(3))), valid_tgt[3]);

  const auto& test = meta["splits"]["test.synth"];
  EXPECT_EQ(test["kept"].get<size_t>() + test["dropped_long"].get<size_t>(), 40u);
  EXPECT_EQ(read_lines(out.file("prep/test.synth.tgt.txt")).size(), test["kept"].get<size_t>());
  EXPECT_NE(log.str().find("train: 1500 read, "), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("over 20 tokens dropped"), std::string::npos) << log.str();
}

TEST(PrepareTest, SeparateVocabularies) {
  SmallCorpus corpus;
  PrepareOptions o;
  o.train_src = corpus.dir.file("train.src");
  o.train_tgt = corpus.dir.file("train.tgt");
  o.valid_src = corpus.dir.file("valid.src");
  o.valid_tgt = corpus.dir.file("valid.tgt");
  o.out_dir = corpus.dir.file("prep");
  o.joint = false;
  o.src_vocab_size = 150;
  o.tgt_vocab_size = 180;
  o.model_type = "unigram";
  std::ostringstream log;
  const nlohmann::json meta = prepare_data(o, log);
  EXPECT_EQ(meta["src_vocab"], "spm.src.model");
  EXPECT_EQ(meta["tgt_vocab"], "spm.tgt.model");
  EXPECT_EQ(meta["src_vocab_size"], 150);
  EXPECT_EQ(meta["tgt_vocab_size"], 180);
  EXPECT_EQ(Vocab::load(o.out_dir + "/spm.tgt.model").size(), 180);
  EXPECT_EQ(meta["splits"]["train"]["kept"], 1500);
}

TEST(PrepareTest, InputErrorsComeEarly) {
  SmallCorpus corpus;
  PrepareOptions o;
  o.train_src = corpus.dir.file("train.src");
  o.train_tgt = corpus.dir.file("train.tgt");
  o.valid_src = corpus.dir.file("valid.src");
  o.valid_tgt = corpus.dir.file("test.tgt");  // 50 vs 40 lines
  o.out_dir = corpus.dir.file("prep");
  std::ostringstream log;
  const std::string msg = input_error_message([&] { prepare_data(o, log); });
  EXPECT_NE(msg.find("test.tgt"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(corpus.dir.file("prep/spm.model")));  // failed before training
}

// A pipe as training text (what <(zcat ...) gives) is read twice by prepare: refused by name at
// once, where the second pass waited forever.
TEST(PrepareTest, APipeAsTrainingTextIsRefusedBeforeAnythingStarts) {
  SmallCorpus corpus;
  const std::string fifo = corpus.dir.file("train.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  PrepareOptions o;
  o.train_src = fifo;
  o.train_tgt = corpus.dir.file("train.tgt");
  o.valid_src = corpus.dir.file("valid.src");
  o.valid_tgt = corpus.dir.file("valid.tgt");
  o.out_dir = corpus.dir.file("prep");
  std::ostringstream log;
  const std::string msg = input_error_message([&] { prepare_data(o, log); });
  EXPECT_NE(msg.find(fifo + ": is not a regular file (a pipe?)"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(corpus.dir.file("prep/spm.model")));
}

// The real corpus, as a new user would prepare it (about 3 s on 2 cores).
TEST(PrepareTest, Multi30kKeepsEveryPair) {
  const std::string data = std::string(YOKE_SHARED_DIR) + "/data/multi30k/";
  if (!fs::exists(data + "train.en.gz")) GTEST_SKIP() << "no Multi30k at " << data;
  TempDir out;
  PrepareOptions o;
  o.train_src = data + "train.en.gz";
  o.train_tgt = data + "train.de.gz";
  o.valid_src = data + "val.en.gz";
  o.valid_tgt = data + "val.de.gz";
  o.tests = {{data + "test_2016_flickr.en.gz", data + "test_2016_flickr.de.gz"}};
  o.test_names = {"flickr2016"};
  o.out_dir = out.file("prep");
  const auto start = std::chrono::steady_clock::now();
  const nlohmann::json meta = prepare_data(o, std::cout);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "Multi30k prepare: " << s << " s\n" << meta.dump(2) << "\n";
  EXPECT_EQ(meta["splits"]["train"]["read"], 29000);
  EXPECT_EQ(meta["splits"]["train"]["kept"], 29000);
  EXPECT_EQ(meta["splits"]["valid"]["kept"], 1014);
}
