#include "util/thread_policy.h"

#include <cstdlib>
#include <unistd.h>

namespace yoke {

void use_passive_omp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 0) != 0) return;
  execv("/proc/self/exe", argv);
  // Only reached when the re-execution failed (no /proc, say): leave the environment as found.
  unsetenv("OMP_WAIT_POLICY");
}

}  // namespace yoke
