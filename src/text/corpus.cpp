#include "text/corpus.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

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

// Closes a gzFile when the reader goes out of scope, also on exceptions.
struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

GzHandle open_for_reading(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw input_error(path, 0, "cannot open: is a directory");
  errno = 0;
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files transparently
  if (!f) {
    const int err = errno;
    throw input_error(path, 0,
                      std::string("cannot open: ") + (err ? std::strerror(err) : "out of memory"));
  }
  gzbuffer(f, 1 << 18);
  return GzHandle(f);
}

std::string gz_error_text(gzFile f) {
  int code = 0;
  const char* msg = gzerror(f, &code);
  if (code == Z_ERRNO) return std::strerror(errno);
  return msg ? msg : "unknown error";
}

// Strips the line terminator rest, drops a BOM on line 1, validates, and stores the line.
void finish_line(const std::string& path, size_t line_no, std::string&& line,
                 std::vector<std::string>& lines) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  const size_t bad = find_invalid_utf8(line);
  if (bad != std::string::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(line[bad]));
    throw input_error(path, line_no,
                      "invalid UTF-8 at byte " + std::to_string(bad + 1) + " (" + hex + ")");
  }
  lines.push_back(std::move(line));
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

std::vector<std::string> read_lines(const std::string& path) {
  GzHandle f = open_for_reading(path);
  std::vector<std::string> lines;
  std::vector<char> buf(1 << 20);
  std::string partial;  // the line that continues past the end of the previous chunk
  size_t line_no = 0;
  for (;;) {
    const int got = gzread(f.get(), buf.data(), static_cast<unsigned>(buf.size()));
    if (got < 0)
      throw input_error(path, 0, "cannot read after line " + std::to_string(line_no) + ": " + gz_error_text(f.get()));
    if (got == 0) break;
    const char* p = buf.data();
    const char* end = p + got;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      if (!nl) {
        partial.append(p, end);
        break;
      }
      partial.append(p, nl);
      finish_line(path, ++line_no, std::move(partial), lines);
      partial = std::string();
      p = nl + 1;
    }
  }
  // zlib ends a truncated stream like a whole one and only remembers Z_BUF_ERROR: without this
  // check a cut-off download would pass for a shorter corpus.
  int code = Z_OK;
  gzerror(f.get(), &code);
  if (code == Z_BUF_ERROR)
    throw input_error(path, 0, "unexpected end of compressed data after line " + std::to_string(line_no) +
                                   " (the file is truncated)");
  if (!partial.empty()) finish_line(path, ++line_no, std::move(partial), lines);
  return lines;
}

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path,
                           CorpusFilterStats* stats) {
  std::vector<std::string> src = read_lines(src_path);
  std::vector<std::string> tgt = read_lines(tgt_path);
  if (src.size() != tgt.size()) {
    const bool src_shorter = src.size() < tgt.size();
    const std::string& shorter = src_shorter ? src_path : tgt_path;
    const std::string& longer = src_shorter ? tgt_path : src_path;
    throw input_error(src_path, 0,
                      "line counts differ: " + src_path + " has " + std::to_string(src.size()) +
                          " lines, " + tgt_path + " has " + std::to_string(tgt.size()) +
                          " lines (" + shorter + " ends after line " +
                          std::to_string(std::min(src.size(), tgt.size())) + "; line " +
                          std::to_string(std::min(src.size(), tgt.size()) + 1) + " of " + longer +
                          " has no partner)");
  }
  ParallelText out;
  out.src.reserve(src.size());
  out.tgt.reserve(tgt.size());
  CorpusFilterStats local;
  local.read = src.size();
  for (size_t i = 0; i < src.size(); ++i) {
    if (is_blank(src[i]) || is_blank(tgt[i])) {
      ++local.dropped_empty;
      continue;
    }
    out.src.push_back(std::move(src[i]));
    out.tgt.push_back(std::move(tgt[i]));
  }
  local.kept = out.src.size();
  if (stats) *stats = local;
  return out;
}

}  // namespace yoke
