// The one atomic file writer, JSON reading with line numbers, and the data directory's meta.json.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "file_helpers.h"
#include "text/data_meta.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/regular_file.h"

namespace yoke {
namespace {

namespace fs = std::filesystem;
using test::read_file;
using test::temp_dir;

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST(AtomicFile, ReplacesTheTargetAndLeavesNoTemporary) {
  const std::string dir = temp_dir("replace");
  write_file_atomically(dir + "/a.txt", "one");
  write_file_atomically(dir + "/a.txt", [](std::ostream& out) { out << "two " << 2; });
  EXPECT_EQ(read_file(dir + "/a.txt"), "two 2");
  EXPECT_EQ(files_in(dir), 1u);
  EXPECT_THROW(write_file_atomically(dir + "/missing/a.txt", "x"), InputError);
}

TEST(AtomicFile, AnAbandonedWriteKeepsTheOldContent) {
  const std::string dir = temp_dir("abandon");
  write_file_atomically(dir + "/a.txt", "old");
  try {
    AtomicFile f(dir + "/a.txt");
    f.write("new, half", 9);
    throw std::runtime_error("the writer fails before commit");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read_file(dir + "/a.txt"), "old");
  EXPECT_EQ(files_in(dir), 1u);
}

TEST(AtomicFile, CopyIsWholeOrNothing) {
  const std::string dir = temp_dir("copy");
  std::string big(300000, 'x');
  big[123456] = 'y';
  write_file_atomically(dir + "/from.bin", big);
  copy_file_atomically(dir + "/from.bin", dir + "/to.bin");
  EXPECT_EQ(read_file(dir + "/to.bin"), big);
  EXPECT_THROW(copy_file_atomically(dir + "/none.bin", dir + "/to.bin"), InputError);
  EXPECT_EQ(read_file(dir + "/to.bin"), big);  // a failed copy leaves the old file
  EXPECT_EQ(files_in(dir), 2u);
}

// Readers open regular files only: a pipe would block the open forever and a device never ends;
// sizes are capped where a file states what it is. None of these opens the file.
TEST(RegularFile, PipesDevicesLoopsAndOversizedFilesAreRefusedUnopened) {
  const std::string dir = temp_dir("regular");
  const std::string fifo = dir + "/spm.model", zero = dir + "/meta.json", loop = dir + "/loop", big = dir + "/big.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", zero);
  fs::create_symlink(loop, loop);
  std::ofstream(big) << std::string(2000, ' ');
  auto message = [](auto f) { return test::input_error_message(f); };
  EXPECT_NE(message([&] { require_regular_file(fifo, "SentencePiece model"); }).find(fifo + ": is a pipe (FIFO)"),
            std::string::npos);
  EXPECT_NE(message([&] { read_json(zero); }).find(zero + ": is a device where a JSON file should be"), std::string::npos);
  EXPECT_NE(message([&] { read_json(loop); }).find("loop of symbolic links"), std::string::npos);
  EXPECT_NE(message([&] { require_regular_file(big, "JSON", 999); }).find("is 2 kB, more than the 999 bytes"),
            std::string::npos);
  EXPECT_NE(message([&] { read_json_lines(fifo); }).find("is a pipe"), std::string::npos);
  EXPECT_EQ(require_regular_file(big, "JSON", 2000), 2000u);
  EXPECT_EQ(require_regular_file(dir + "/missing", "JSON"), 0u);  // the caller says what was expected
}

TEST(JsonFile, ParseErrorsNameTheFileAndLine) {
  const std::string dir = temp_dir("json");
  write_file_atomically(dir + "/bad.json", "{\n  \"a\": 1,\n  \"b\": ,\n}\n");
  try {
    read_json(dir + "/bad.json");
    FAIL() << "invalid JSON was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json:3: invalid JSON"), std::string::npos) << e.what();
  }
  write_json(dir + "/good.json", {{"a", 1}, {"b", {1, 2}}});
  EXPECT_EQ(read_json(dir + "/good.json").at("b").at(1), 2);
  EXPECT_THROW(read_json(dir + "/none.json"), InputError);
}

TEST(JsonFile, LinesOfOneTypeSkipATornLastLine) {
  const std::string dir = temp_dir("jsonl");
  write_file_atomically(dir + "/m.jsonl",
                        "{\"type\":\"train\",\"update\":1}\n{\"type\":\"valid\",\"update\":1}\n"
                        "{\"type\":\"valid\",\"update\":2}\n{\"type\":\"valid\",\"upd");
  const auto valid = read_json_lines(dir + "/m.jsonl", "valid");
  ASSERT_EQ(valid.size(), 2u);
  EXPECT_EQ(valid[1].at("update"), 2);
  EXPECT_TRUE(read_json_lines(dir + "/none.jsonl", "valid").empty());
}

TEST(DataMeta, ReadsWhatPrepareWrites) {
  const std::string dir = temp_dir("meta");
  write_json(dir + "/meta.json",
             {{"format_version", 1}, {"task", "translate"}, {"joint", true}, {"src_vocab_size", 900},
              {"tgt_vocab_size", 900},
              {"splits",
               {{"train", {{"file", "train.bin"}}},
                {"valid", {{"file", "valid.bin"}, {"src_text", "valid.src.txt"}, {"tgt_text", "valid.tgt.txt"}}},
                {"test.toy", {{"src_text", "test.toy.src.txt"}, {"tgt_text", "test.toy.tgt.txt"}}}}}});
  const auto m = DataMeta::read(dir);
  EXPECT_TRUE(m.joint);
  EXPECT_EQ(m.src_vocab_size, 900);
  ASSERT_EQ(m.tests().size(), 1u);
  EXPECT_EQ(m.tests()[0].test_name(), "toy");
  EXPECT_EQ(m.path(m.tests()[0].tgt_text), (fs::path(dir) / "test.toy.tgt.txt").string());

  write_json(dir + "/meta.json", {{"format_version", 1}});
  try {
    DataMeta::read(dir);
    FAIL() << "an incomplete meta.json was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("meta.json"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DataMeta::read(dir + "/nothing"), InputError);
}

}  // namespace
}  // namespace yoke
