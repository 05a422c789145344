#include "util/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/error.h"

namespace yoke {

DirLock::DirLock(const std::string& lock_path, const std::string& what) : path_(lock_path) {
  for (;;) {
  fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw input_error(lock_path, 0, std::string("cannot create lock file: ") + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char pid[32] = {0};
    const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (e != EWOULDBLOCK) throw input_error(lock_path, 0, std::string("cannot lock: ") + std::strerror(e));
    std::string holder = n > 0 ? std::string(pid, size_t(n)) : std::string("unknown");
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    throw input_error(what, 0, "in use by another yoke process (pid " + holder +
                                   "); wait for it to finish or choose another directory");
  }
  // The holder removes the file when it is done (below): the lock taken is ours only if the path
  // still names the file it was taken on, else another process has since made a new one there.
  struct stat held {}, named {};
  if (::fstat(fd_, &held) == 0 && ::stat(lock_path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
      held.st_dev == named.st_dev)
    break;
  ::close(fd_);
  }
  // The pid is for the message above; the lock itself is the flock.
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t w = ::pwrite(fd_, me.data(), me.size(), 0);
  }
}

DirLock::~DirLock() {
  if (fd_ < 0) return;
  // Removed while still held, so that no lock file outlives its command; a process that opened it
  // before the removal finds, once it gets the lock, that the path no longer names it, and retries.
  ::unlink(path_.c_str());
  ::close(fd_);  // closing releases the flock
}

std::string lock_file_in(const std::string& dir) { return (std::filesystem::path(dir) / "yoke.lock").string(); }

}  // namespace yoke
