// Writing a file so that no reader, crash or full disk ever leaves half of it under its name:
// the bytes go to a temporary file beside the target, are flushed and fsync'ed, renamed over
// the target, and the folder is fsync'ed so that the rename itself survives a power cut.
// Every file yoke writes for later use (checkpoints, data, metrics summaries, reports) goes
// through here.
#pragma once
#include <cstdio>
#include <functional>
#include <iosfwd>
#include <string>

namespace yoke {

class AtomicFile {
 public:
  // Opens a temporary file beside `path`; throws InputError naming `path` when it cannot.
  // A target that exists and is no regular file (/dev/stdout, a pipe) is written directly:
  // renaming over it would replace the device or pipe with a file.
  explicit AtomicFile(std::string path);
  // Without commit() (an exception on the way, say) the temporary file is removed and the
  // target stays as it was.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::FILE* stream() { return file_; }  // for binary writers that write piecewise
  void write(const void* data, size_t bytes);  // throws InputError naming the target
  // Flush, fsync, close, rename over the target, fsync the folder; throws InputError naming the
  // target with the system's reason ("No space left on device").
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int error);
  std::string path_, tmp_;  // tmp_ empty: writing the target directly
  std::FILE* file_ = nullptr;
};

void write_file_atomically(const std::string& path, const std::string& bytes);
// For writers that produce a stream; the text is assembled in memory first.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);
// Removes the temporaries that killed writers left in `dir` (files named NAME.tmp<pid>_<n>), not
// recursively; returns how many. Only for the holder of the directory's lock (util/dir_lock.h).
size_t remove_stale_temporaries(const std::string& dir);

// A copy that is never seen half-done under `to` (checkpoint_best from checkpoint_last).
void copy_file_atomically(const std::string& from, const std::string& to);

}  // namespace yoke
