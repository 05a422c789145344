// Reading raw text corpora: plain or gzip, strictly validated UTF-8, one sentence per line.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace yoke {

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
};

struct ParallelText {
  std::vector<std::string> src, tgt;
};

// Both sides of a parallel corpus, line i of one aligned with line i of the other. Pairs where
// either side is blank are dropped and counted in `stats` (may be null). Files with different
// line counts are an InputError naming both files and both counts.
ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path,
                           CorpusFilterStats* stats);

}  // namespace yoke
