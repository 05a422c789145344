#include "text/corpus.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "util/error.h"

namespace yoke {
namespace {

// Length of the UTF-8 sequence starting at s[i] if it is valid, 0 otherwise.
// Follows the well-formed byte table of Unicode 3.9 (Table 3-7), which excludes overlongs,
// surrogates and code points above U+10FFFF by bounding the second byte.
size_t utf8_sequence_length(const unsigned char* s, size_t i, size_t n) {
  const unsigned char c = s[i];
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i + k < n && s[i + k] >= lo && s[i + k] <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;        // no overlongs
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (c >= 0xE1 && c <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;  // no overlongs
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;  // <= U+10FFFF
  return 0;
}

}  // namespace

// A plain or gzip file in chunks. gzip data is inflated here rather than by gzread, which
// ends a truncated stream like a whole one and skips whatever follows the last member: a damaged
// or wrongly joined file must not pass for a shorter corpus. Members may follow each other
// (`cat a.gz b.gz` is one gzip file, as gzip itself reads it); any other byte after them is an error.
class ChunkReader {
 public:
  explicit ChunkReader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw input_error(path, 0, "cannot open: is a directory");
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_) throw input_error(path, 0, std::string("cannot open: ") + std::strerror(errno));
    in_.resize(1 << 18);
    fill();
    gzip_ = have_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
    if (gzip_ && inflateInit2(&z_, 15 + 16) != Z_OK) throw input_error(path, 0, "cannot start gzip decompression");
  }
  ~ChunkReader() {
    if (gzip_) inflateEnd(&z_);
  }
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Bytes of the file (compressed, for gzip) taken in so far: progress against the file size.
  uint64_t file_bytes_consumed() const { return consumed_ + pos_; }

  // Up to `n` bytes of text into `out`; 0 at the end. `lines` (read so far) goes into messages.
  size_t read(char* out, size_t n, size_t lines) {
    if (!gzip_) {
      if (pos_ == have_ && !fill()) return 0;
      const size_t k = std::min(n, have_ - pos_);
      std::memcpy(out, in_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(n);
    while (z_.avail_out == n) {
      if (member_done_) {  // another member, the end, or bytes that are neither
        if (pos_ + 2 > have_) fill();
        if (pos_ == have_) return 0;
        if (have_ - pos_ < 2 || in_[pos_] != 0x1f || in_[pos_ + 1] != 0x8b)
          throw input_error(path_, 0, "unexpected bytes after the end of the compressed data (at byte " +
                                          std::to_string(consumed_ + pos_) + " of the file, after line " +
                                          std::to_string(lines) + "): the file is damaged or other data was appended");
        inflateReset(&z_);
        member_done_ = false;
      }
      if (pos_ == have_ && !fill())
        throw input_error(path_, 0, "unexpected end of compressed data after line " + std::to_string(lines) +
                                        " (the file is truncated)");
      z_.next_in = in_.data() + pos_;
      z_.avail_in = static_cast<uInt>(have_ - pos_);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      pos_ = have_ - z_.avail_in;
      if (rc == Z_STREAM_END) member_done_ = true;
      else if (rc != Z_OK && rc != Z_BUF_ERROR)
        throw input_error(path_, 0, "cannot read after line " + std::to_string(lines) + ": " +
                                        (z_.msg ? z_.msg : "invalid compressed data"));
    }
    return n - z_.avail_out;
  }

 private:
  // Moves the unread input to the front and reads more after it; false when nothing more came.
  bool fill() {
    if (pos_ > 0) {
      std::memmove(in_.data(), in_.data() + pos_, have_ - pos_);
      consumed_ += pos_;
      have_ -= pos_;
      pos_ = 0;
    }
    const size_t got = std::fread(in_.data() + have_, 1, in_.size() - have_, file_.get());
    if (got == 0 && std::ferror(file_.get()))
      throw input_error(path_, 0, std::string("cannot read: ") + std::strerror(errno));
    have_ += got;
    return got > 0;
  }

  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_{nullptr, &std::fclose};
  std::vector<unsigned char> in_;
  size_t pos_ = 0, have_ = 0;  // unread input is in_[pos_, have_)
  uint64_t consumed_ = 0;      // file bytes before in_[0]
  bool gzip_ = false, member_done_ = false;
  z_stream z_{};
};

namespace {

[[noreturn]] void throw_too_long(const std::string& path, size_t line_no) {
  throw input_error(path, line_no, "line longer than " + std::to_string(kMaxLineBytes >> 20) +
                                       " MiB (a file without line breaks?): one sentence per line is expected");
}

// Strips the line terminator rest, drops a BOM on line 1 and validates.
void finish_line(const std::string& path, size_t line_no, std::string& line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // A carriage return inside a line: text whose lines end in CR alone (classic Mac) reads as one
  // line, which SentencePiece then refused with an internal error.
  if (const size_t cr = line.find('\r'); cr != std::string::npos)
    throw input_error(path, line_no, "carriage return inside the line at byte " + std::to_string(cr + 1) +
                                         " (lines ending in CR alone? convert them: tr '\\r' '\\n')");
  if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  const size_t bad = find_invalid_utf8(line);
  if (bad != std::string::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(line[bad]));
    throw input_error(path, line_no,
                      "invalid UTF-8 at byte " + std::to_string(bad + 1) + " (" + hex + ")");
  }
}

}  // namespace

size_t find_invalid_utf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // Fast path: skip 8 ASCII bytes at a time (most corpus text is mostly ASCII).
    if (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const size_t len = utf8_sequence_length(s, i, n);
    if (len == 0) return i;
    i += len;
  }
  return std::string::npos;
}

bool is_blank(const std::string& line) {
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\v' && c != '\f') return false;
  return true;
}

LineReader::LineReader(const std::string& path)
    : path_(path), reader_(std::make_unique<ChunkReader>(path)), buf_(1 << 20) {
  std::error_code ec;
  file_bytes_ = std::filesystem::file_size(path, ec);
  if (ec) file_bytes_ = 0;
}

LineReader::~LineReader() = default;

uint64_t LineReader::bytes_read() const { return reader_->file_bytes_consumed(); }

bool LineReader::next(std::string& line) {
  line.clear();
  for (;;) {
    if (pos_ == have_) {
      if (done_) break;
      have_ = reader_->read(buf_.data(), buf_.size(), line_no_);
      pos_ = 0;
      if (have_ == 0) {
        done_ = true;
        break;
      }
    }
    const char* p = buf_.data() + pos_;
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', have_ - pos_));
    if (!nl) {
      line.append(p, have_ - pos_);
      pos_ = have_;
      // Memory stays bounded however long a line runs (a file without line breaks, say).
      if (line.size() > kMaxLineBytes)
        throw_too_long(path_, line_no_ + 1);
      continue;
    }
    line.append(p, nl);
    pos_ = size_t(nl - buf_.data()) + 1;
    if (line.size() > kMaxLineBytes + 1)  // + 1: a CR of a CR LF ending
      throw_too_long(path_, line_no_ + 1);
    finish_line(path_, ++line_no_, line);
    return true;
  }
  if (line.empty()) return false;  // no text after the last "\n"
  finish_line(path_, ++line_no_, line);
  return true;
}

std::vector<std::string> read_lines(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

PairReader::PairReader(const std::string& src_path, const std::string& tgt_path) : src_(src_path), tgt_(tgt_path) {}

bool PairReader::next(std::string& src, std::string& tgt) {
  const bool has_src = src_.next(src), has_tgt = tgt_.next(tgt);
  if (has_src == has_tgt) return has_src;
  // One file ended first: count the rest of the other, so the message gives both counts.
  LineReader& longer = has_src ? src_ : tgt_;
  std::string rest;
  while (longer.next(rest)) {}
  const size_t n_src = src_.lines_read(), n_tgt = tgt_.lines_read();
  const std::string& shorter_path = has_src ? tgt_.path() : src_.path();
  throw input_error(src_.path(), 0,
                    "line counts differ: " + src_.path() + " has " + std::to_string(n_src) + " lines, " +
                        tgt_.path() + " has " + std::to_string(n_tgt) + " lines (" + shorter_path +
                        " ends after line " + std::to_string(std::min(n_src, n_tgt)) + "; line " +
                        std::to_string(std::min(n_src, n_tgt) + 1) + " of " + longer.path() + " has no partner)");
}

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path,
                           CorpusFilterStats* stats) {
  PairReader reader(src_path, tgt_path);
  ParallelText out;
  CorpusFilterStats local;
  std::string src, tgt;
  while (reader.next(src, tgt)) {
    ++local.read;
    if (is_blank(src) || is_blank(tgt)) {
      ++local.dropped_empty;
      continue;
    }
    out.src.push_back(src);
    out.tgt.push_back(tgt);
  }
  local.kept = out.src.size();
  if (stats) *stats = local;
  return out;
}

}  // namespace yoke
