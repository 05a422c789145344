#include "util/checksum.h"

#include <zlib.h>

namespace yoke {

uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes) {
  return uint32_t(crc32_z(crc, static_cast<const Bytef*>(data), bytes));
}

}  // namespace yoke
