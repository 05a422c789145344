// CRC-32 (zlib's, already linked for gzip input) of checkpoint tensors and binarized data:
// catches disk and copy damage that leaves a file's length and header intact.
#pragma once
#include <cstddef>
#include <cstdint>

namespace yoke {

// Continues `crc` over bytes (start with 0), so a file can be summed piece by piece.
uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes);

}  // namespace yoke
