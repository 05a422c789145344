// CRC-32 (zlib's, already linked for gzip input) of checkpoint headers and tensors, binarized
// data and vocabulary files: catches disk and copy damage that leaves a file's length intact, and
// tells one vocabulary file from another.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace yoke {

// Continues `crc` over bytes (start with 0), so a file can be summed piece by piece.
uint32_t crc32_update(uint32_t crc, const void* data, size_t bytes);

// The CRC-32 of a whole file; InputError naming it when it cannot be read.
uint32_t file_crc32(const std::string& path);

}  // namespace yoke
