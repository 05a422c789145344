// Damaged inputs and outputs the tests make themselves: a truncated .gz, bytes after a .gz's
// data, a full device or disk, a directory already holding a data set, flipped bytes and foreign
// token ids in binarized data, a directory locked by another writer.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <zlib.h>

#include "file_helpers.h"
#include "text/binarized.h"
#include "text/corpus.h"
#include "text/prepare.h"
#include "text/synthetic.h"
#include "text/vocab.h"
#include "util/atomic_file.h"
#include "util/dir_lock.h"
#include "util/error.h"

namespace yoke {
namespace {

namespace fs = std::filesystem;
using test::temp_dir;

TEST(DamagedInput, TruncatedGzipIsAnErrorNamingTheFile) {
  const std::string dir = temp_dir("gz");
  const std::string gz = dir + "/text.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  for (int i = 1; i <= 5000; ++i) gzprintf(f, "line %d of a corpus that compresses well\n", i);
  gzclose(f);
  EXPECT_EQ(read_lines(gz).size(), 5000u);  // whole, it reads as before
  fs::resize_file(gz, fs::file_size(gz) / 2);
  const std::string msg = test::input_error_message([&] { read_lines(gz); });
  EXPECT_NE(msg.find(gz), std::string::npos) << msg;
  EXPECT_NE(msg.find("unexpected end of compressed data after line"), std::string::npos) << msg;
}

// gzread skipped whatever followed the last gzip member: a damaged file, or text appended to a
// compressed one, passed for a shorter corpus.
TEST(DamagedInput, BytesAfterTheGzipDataAreAnErrorNamingTheFile) {
  const std::string dir = temp_dir("gz-trailing");
  const auto gz = [&](const std::string& name, const std::string& text) {
    gzFile f = gzopen((dir + "/" + name).c_str(), "wb");
    gzwrite(f, text.data(), unsigned(text.size()));
    gzclose(f);
    return test::read_file(dir + "/" + name);
  };
  const std::string a = gz("a.gz", "one\ntwo\n"), b = gz("b.gz", "three\n");
  std::ofstream(dir + "/joined.gz", std::ios::binary) << a << b;  // `cat a.gz b.gz`: one gzip file of two members
  EXPECT_EQ(read_lines(dir + "/joined.gz"), (std::vector<std::string>{"one", "two", "three"}));
  for (const std::string& tail : {std::string("three\n"), std::string(512, '\0'), std::string("\x1f")}) {
    std::ofstream(dir + "/tail.gz", std::ios::binary) << a << tail;
    const std::string msg = test::input_error_message([&] { read_lines(dir + "/tail.gz"); });
    EXPECT_NE(msg.find(dir + "/tail.gz: unexpected bytes after the end of the compressed data (at byte " +
                       std::to_string(a.size()) + " of the file, after line 2)"),
              std::string::npos) << msg;
  }
}

TEST(DamagedOutput, AFullDeviceIsAnErrorAndStaysADevice) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  const std::string msg = test::input_error_message([] { write_file_atomically("/dev/full", std::string(1 << 16, 'x')); });
  EXPECT_NE(msg.find("/dev/full: cannot write: No space left on device"), std::string::npos) << msg;
  EXPECT_TRUE(fs::is_character_file("/dev/full"));  // written through, never renamed over
}

TEST(DamagedInput, BinarizedDataFailsItsChecksumWhenABitFlips) {
  const std::string dir = temp_dir("bin");
  TokenizedCorpus c;
  for (int i = 0; i < 100; ++i) c.add({i % 7 + 4, 5, 6}, {i % 5 + 4, 8});
  save_binarized(dir + "/d.bin", c);
  EXPECT_EQ(load_binarized(dir + "/d.bin").size(), 100u);
  {
    std::fstream f(dir + "/d.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-40, std::ios::end);  // inside the target tokens: lengths and offsets stay consistent
    f.put(char(0x7f));
  }
  const std::string msg = test::input_error_message([&] { load_binarized(dir + "/d.bin"); });
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
}

TEST(DamagedInput, TokenIdsOutsideTheVocabularyNameTheFileAndPair) {
  TokenizedCorpus c;
  c.add({4, 5}, {6});
  c.add({4, 900}, {6});
  check_token_ids(c, 1000, 10, "train.bin");  // within both vocabularies
  const std::string msg = test::input_error_message([&] { check_token_ids(c, 800, 10, "train.bin"); });
  EXPECT_NE(msg.find("train.bin: source token id 900 in pair 2"), std::string::npos) << msg;
}

PrepareOptions tiny_prepare(const std::string& dir) {
  SyntheticOptions so;
  so.train = 300;
  so.valid = 20;
  so.test = 10;
  write_synthetic_corpus(dir + "/corpus", so);
  PrepareOptions p = synthetic_prepare_options(dir + "/corpus", dir + "/data");
  p.vocab_size = 150;
  return p;
}

// SentencePiece wrote its model itself, and a failed write came back as an error about the
// training text. The model is written by yoke now: the error names it.
TEST(DamagedOutput, AVocabularyWrittenToAFullDeviceNamesTheFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  const std::string dir = temp_dir("vocab-full");
  fs::create_symlink("/dev/full", dir + "/spm.model");
  std::vector<std::string> text;
  for (int i = 0; i < 200; ++i) text.push_back("a small text with words number " + std::to_string(i));
  VocabTrainOptions v;
  v.input_files = {"input.txt"};
  v.model_prefix = dir + "/spm";
  v.vocab_size = 60;
  const std::string msg = test::input_error_message([&] { train_vocab_on(v, {&text}); });
  EXPECT_NE(msg.find(dir + "/spm.model: cannot write: No space left on device"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("input.txt"), std::string::npos) << msg;
}

// A disk that fills up while prepare writes (a file size limit stands in for it: the same failed
// write(2), errno EFBIG instead of ENOSPC): the error names the file written, not the inputs.
TEST(DamagedOutput, PrepareOnAFullDiskNamesTheFileItWrites) {
  const std::string dir = temp_dir("prepare-full");
  PrepareOptions p = tiny_prepare(dir);
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit small = before;
  small.rlim_cur = 2048;  // below the size of spm.model, the first file prepare writes
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // a failed write, not a killed process
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::ostringstream log;
  const std::string msg = test::input_error_message([&] { prepare_data(p, log); });
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(msg.find("/spm.model: cannot write: File too large"), std::string::npos) << msg;
  EXPECT_EQ(msg.find(p.train_src), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir + "/data")) << "a failed prepare leaves no data directory";
}

TEST(DamagedInput, PrepareThatKeepsNoTrainingPairIsAnError) {
  const std::string dir = temp_dir("prepare-max-len");
  PrepareOptions p = tiny_prepare(dir);
  p.max_len = 1;  // every pair is longer
  std::ostringstream log;
  const std::string msg = test::input_error_message([&] { prepare_data(p, log); });
  EXPECT_NE(msg.find("no training pair is left (300 over --max-len 1 tokens"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir + "/data/meta.json"));  // no data directory that looks prepared
}

TEST(DamagedInput, PrepareRefusesAPreparedDirectoryAndForceReplacesItWhole) {
  const std::string dir = temp_dir("prepare");
  PrepareOptions p = tiny_prepare(dir);
  std::ostringstream log;
  prepare_data(p, log);
  std::ofstream(dir + "/data/stale-from-before.txt") << "x\n";
  const std::string msg = test::input_error_message([&] { prepare_data(p, log); });
  EXPECT_NE(msg.find("already holds a prepared data set; --force replaces it"), std::string::npos) << msg;
  EXPECT_TRUE(fs::exists(dir + "/data/stale-from-before.txt"));  // refused: nothing touched

  p.force = true;
  prepare_data(p, log);
  EXPECT_TRUE(fs::exists(dir + "/data/meta.json"));
  EXPECT_FALSE(fs::exists(dir + "/data/stale-from-before.txt"));  // replaced completely
  for (const auto& e : fs::directory_iterator(dir))  // no building or replaced directory left
    EXPECT_TRUE(e.path().filename() == "corpus" || e.path().filename() == "data" ||
                e.path().filename() == ".data.lock")
        << e.path();

  fs::create_directories(dir + "/other");
  std::ofstream(dir + "/other/notes.txt") << "mine\n";
  p.force = false;
  p.out_dir = dir + "/other";
  EXPECT_NE(test::input_error_message([&] { prepare_data(p, log); }).find("is not empty"), std::string::npos);
}

TEST(DirLock, ASecondWriterIsRefusedWithTheHoldersPid) {
  const std::string dir = temp_dir("lock");
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = ::fork();
  if (child == 0) {  // holds the lock until told to go
    DirLock held(lock_file_in(dir), dir);
    char c = 1;
    [[maybe_unused]] auto w = ::write(ready[1], &c, 1);
    [[maybe_unused]] auto r = ::read(release[0], &c, 1);
    _exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  const std::string msg = test::input_error_message([&] { DirLock second(lock_file_in(dir), dir); });
  EXPECT_NE(msg.find("in use by another yoke process (pid " + std::to_string(child) + ")"), std::string::npos) << msg;
  ASSERT_EQ(::write(release[1], &c, 1), 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  {
    DirLock after(lock_file_in(dir), dir);  // the holder is gone (its file left, as after a kill): free again
    EXPECT_TRUE(fs::exists(lock_file_in(dir)));
  }
  EXPECT_FALSE(fs::exists(lock_file_in(dir)));  // released at the end of its command: no file outlives it
  DirLock again(lock_file_in(dir), dir);
}

TEST(AtomicFile, StaleTemporariesAreRemovedAndNothingElse) {
  const std::string dir = temp_dir("stale");
  for (const char* f : {"checkpoint_last.ykp.tmp123_0", "metrics.jsonl.tmp9_12", "keep.tmp", "keep.tmp12", "data.ykp"})
    std::ofstream(dir + "/" + f) << "x";
  EXPECT_EQ(remove_stale_temporaries(dir), 2u);
  EXPECT_FALSE(fs::exists(dir + "/checkpoint_last.ykp.tmp123_0"));
  EXPECT_TRUE(fs::exists(dir + "/keep.tmp") && fs::exists(dir + "/keep.tmp12") && fs::exists(dir + "/data.ykp"));
}

}  // namespace
}  // namespace yoke
