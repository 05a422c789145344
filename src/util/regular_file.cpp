#include "util/regular_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/error.h"

namespace yoke {

std::string size_text(uint64_t bytes) {
  char buf[32];
  if (bytes >= 1000000000ull) std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / 1e9);
  else if (bytes >= 1000000ull) std::snprintf(buf, sizeof buf, "%.0f MB", double(bytes) / 1e6);
  else if (bytes >= 1000ull) std::snprintf(buf, sizeof buf, "%.0f kB", double(bytes) / 1e3);
  else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  return buf;
}

uint64_t require_regular_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    if (errno == ELOOP) throw input_error(path, 0, "is a loop of symbolic links, not a " + what);
    throw input_error(path, 0, "cannot read this " + what + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode) ? "a pipe (FIFO)"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISDIR(st.st_mode)                          ? "a directory"
                       : S_ISSOCK(st.st_mode)                         ? "a socket"
                                                                      : "not a regular file";
    throw input_error(path, 0, std::string("is ") + kind + " where a " + what + " should be: yoke reads regular files "
                                   "only (a pipe would wait for a writer, a device never ends)");
  }
  const uint64_t size = uint64_t(st.st_size);
  if (size > max_bytes)
    throw input_error(path, 0, "is " + size_text(size) + ", more than the " + size_text(max_bytes) + " a " + what +
                                   " can plausibly be: refused before reading it");
  return size;
}

}  // namespace yoke
