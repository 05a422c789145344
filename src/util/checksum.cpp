#include "util/checksum.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {

uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes) {
  return uint32_t(crc32_z(crc, static_cast<const Bytef*>(data), bytes));
}

uint32_t file_crc32(const std::string& path) {
  require_regular_file(path, "file");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw input_error(path, 0, std::string("cannot open: ") + std::strerror(errno));
  uint32_t crc = 0;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) crc = crc32_update(crc, buf, n);
  if (std::ferror(f.get())) throw input_error(path, 0, std::string("cannot read: ") + std::strerror(errno));
  return crc;
}

}  // namespace yoke
