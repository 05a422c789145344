#include "util/malloc_tunables.h"

#include <cstring>

namespace yoke {

const char* malloc_tunables_for(const char* command) {
  if (command != nullptr && std::strcmp(command, "serve") == 0) return nullptr;
  return "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"
         ":glibc.malloc.top_pad=67108864";
}

}  // namespace yoke
