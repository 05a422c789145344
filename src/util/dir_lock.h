// One writer per working directory (a model's save_dir, an experiment's --out, a data directory
// being prepared): an exclusive flock on a lock file that holds the holder's pid. The kernel
// drops the lock when its process dies, so a killed run never blocks its own resume; a holder that
// ends normally removes the file, so no lock file outlives its command.
#pragma once
#include <string>

namespace yoke {

class DirLock {
 public:
  // Locks `lock_path` (created if missing). When another process holds it, throws InputError:
  // "DIR is in use by another yoke (pid N); wait for it or use another directory". `what`
  // names the directory in that message.
  DirLock(const std::string& lock_path, const std::string& what);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
  std::string path_;
};

// The lock of a directory that stays in place (save_dir, experiment --out): DIR/yoke.lock.
std::string lock_file_in(const std::string& dir);

}  // namespace yoke
