// util/malloc_tunables.h: which commands run with glibc's heap kept and on huge pages.
#include <gtest/gtest.h>

#include <string>

#include "util/malloc_tunables.h"

using namespace yoke;

TEST(MallocTunables, EveryCommandButServeKeepsItsHeapOnHugePages) {
  for (const char* command : {"train", "translate", "generate", "experiment", "score", "--part", ""}) {
    const char* t = malloc_tunables_for(command);
    ASSERT_NE(t, nullptr) << command;
    const std::string tunables = t;
    for (const char* setting : {"glibc.malloc.hugetlb=1", "glibc.malloc.mmap_threshold=33554432",
                                "glibc.malloc.trim_threshold=1073741824", "glibc.malloc.top_pad=67108864"})
      EXPECT_NE(tunables.find(setting), std::string::npos) << command << ": " << setting;
  }
  EXPECT_NE(malloc_tunables_for(nullptr), nullptr);
  // A server gives back what a burst of requests took.
  EXPECT_EQ(malloc_tunables_for("serve"), nullptr);
}
