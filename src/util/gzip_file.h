// Writing gzip files that are the same bytes on every run (no time stamp, no file name in the
// header), so that committed result folders can be rebuilt byte for byte. Reading is
// text/corpus.h's read_lines, which takes plain and gzip files alike.
#pragma once
#include <string>

namespace yoke {

// `bytes` gzip-compressed (level 9) into `path`, atomically. Throws InputError naming the path.
void write_gzip_atomically(const std::string& path, const std::string& bytes);

}  // namespace yoke
