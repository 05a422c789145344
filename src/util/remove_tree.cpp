#include "util/remove_tree.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace yoke {

namespace {

// nftw's callback takes no context; the first failure of the walk in progress goes here.
thread_local std::string* first_failure = nullptr;

int remove_entry(const char* p, const struct stat*, int type, struct FTW*) {
  // FTW_DP: a directory after its contents (FTW_DEPTH); FTW_DNR: one that could not be read, tried
  // anyway; everything else (files, links as themselves under FTW_PHYS) is unlinked.
  const bool dir = type == FTW_DP || type == FTW_DNR;
  if ((dir ? ::rmdir(p) : ::unlink(p)) != 0 && errno != ENOENT && first_failure->empty())
    *first_failure = std::string(p) + ": " + std::strerror(errno);
  return 0;  // go on: remove what can be removed
}

}  // namespace

std::string remove_tree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "" : path + ": " + std::strerror(errno);
  std::string failure;
  std::string* outer = first_failure;
  first_failure = &failure;
  // 64 open directories at most; deeper trees are walked with fewer descriptors, not refused.
  if (::nftw(path.c_str(), remove_entry, 64, FTW_DEPTH | FTW_PHYS) != 0 && failure.empty())
    failure = path + ": " + std::strerror(errno);
  first_failure = outer;
  return failure;
}

}  // namespace yoke
