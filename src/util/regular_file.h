// Before a file is opened for reading: it must be a regular file of a plausible size. Opening a
// FIFO for reading waits for a writer that may never come (a hang no signal handler sees, since it
// happens inside open), a device such as /dev/zero never ends, and a size claimed inside a file is
// trusted only up to a stated cap. Every reader of a model, data, checkpoint, vocabulary, config or
// metrics file calls this first.
#pragma once
#include <cstdint>
#include <string>

namespace yoke {

constexpr uint64_t kNoSizeCap = UINT64_MAX;

// InputError naming the file when `path` exists and is not a regular file (after symbolic links),
// or is larger than max_bytes; `what` says what it is ("checkpoint", "SentencePiece model").
// A missing file is left to the caller, whose message says what was expected there. Returns the
// file's size (0 when missing).
uint64_t require_regular_file(const std::string& path, const std::string& what, uint64_t max_bytes = kNoSizeCap);

// "3.2 GB", "512 MB", "12 kB", "40 bytes": a size as messages give it.
std::string size_text(uint64_t bytes);

}  // namespace yoke
