// Reading raw text corpora: plain or gzip, strictly validated UTF-8, one sentence per line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace yoke {

class ChunkReader;

// The lines of a plain or gzip file one at a time, with the checks of read_lines, holding one
// chunk of the file (1 MB) whatever its size.
// The longest line any reader takes, in bytes: a sentence is far shorter; a longer line is an
// InputError, found before it fills memory (a file without line breaks, a binary file).
constexpr size_t kMaxLineBytes = size_t(1) << 20;

class LineReader {
 public:
  explicit LineReader(const std::string& path);  // InputError naming the file if it cannot be opened
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line into `line` (without its terminator); false at the end of the file.
  bool next(std::string& line);
  size_t lines_read() const { return line_no_; }
  // Progress: bytes of the file taken in so far (compressed bytes for gzip) and its size.
  uint64_t bytes_read() const;
  uint64_t file_bytes() const { return file_bytes_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<ChunkReader> reader_;
  std::vector<char> buf_;
  size_t pos_ = 0, have_ = 0, line_no_ = 0;
  uint64_t file_bytes_ = 0;
  bool done_ = false;
};

// All lines of a plain or gzip file (detected by content, not by name), without the trailing
// "\n" / "\r\n". A UTF-8 byte-order mark at the start is dropped. Throws InputError naming the
// file (and the line) when it cannot be read or is not valid UTF-8.
std::vector<std::string> read_lines(const std::string& path);

// Index of the first byte that breaks strict UTF-8 (overlongs, surrogates and code points above
// U+10FFFF are errors), or std::string::npos when the whole text is valid.
size_t find_invalid_utf8(const std::string& text);

// True when the line holds nothing but ASCII whitespace.
bool is_blank(const std::string& line);

struct CorpusFilterStats {
  size_t read = 0, kept = 0, dropped_empty = 0, dropped_long = 0;
  size_t dropped_ratio = 0, dropped_duplicate = 0;  // prepare's optional filters (--max-ratio, --dedup)
};

struct ParallelText {
  std::vector<std::string> src, tgt;
};

// Both sides of a parallel corpus, one pair at a time: line i of one file with line i of the other.
class PairReader {
 public:
  PairReader(const std::string& src_path, const std::string& tgt_path);
  // The next pair, blank sides included; false at the end of both files. Files with different
  // line counts are an InputError naming both files and both counts.
  bool next(std::string& src, std::string& tgt);
  size_t pairs_read() const { return src_.lines_read(); }
  uint64_t bytes_read() const { return src_.bytes_read() + tgt_.bytes_read(); }
  uint64_t file_bytes() const { return src_.file_bytes() + tgt_.file_bytes(); }

 private:
  LineReader src_, tgt_;
};

// Both sides of a parallel corpus, line i of one aligned with line i of the other. Pairs where
// either side is blank are dropped and counted in `stats` (may be null). Files with different
// line counts are an InputError naming both files and both counts.
ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path,
                           CorpusFilterStats* stats);

}  // namespace yoke
