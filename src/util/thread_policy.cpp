#include "util/thread_policy.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "util/malloc_tunables.h"

namespace yoke {

const char* blas_kernel_name_in(void* library) {
  using CoreName = char* (*)();
  const auto core_name = reinterpret_cast<CoreName>(dlsym(library, "openblas_get_corename"));
  return core_name ? core_name() : "";
}

// Looked up at run time: OpenBLAS comes in through LibTorch's libblas.so.3 (Debian's
// alternatives), and another BLAS may stand there instead.
const char* blas_kernel_name() { return blas_kernel_name_in(RTLD_DEFAULT); }

namespace {

// OpenBLAS's thread-count functions, looked up at run time as openblas_get_corename is.
using GetThreads = int (*)();
using SetThreads = void (*)(int);
GetThreads blas_get_threads() { return reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")); }
SetThreads blas_set_threads() { return reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")); }

}  // namespace

void set_blas_threads(int threads) {
  if (const auto set = blas_set_threads()) set(threads);
}

BlasThreadsOverride::BlasThreadsOverride(int threads) {
  const auto get = blas_get_threads();
  const auto set = blas_set_threads();
  if (!get || !set) return;
  before_ = get();
  set(threads);
}

BlasThreadsOverride::~BlasThreadsOverride() {
  if (before_ > 0) blas_set_threads()(before_);
}

const char* blas_kernels_to_use(const char* chosen, bool avx512, bool avx2_fma) {
  if (chosen == nullptr || strcasecmp(chosen, "prescott") != 0) return nullptr;
  if (avx512) return "SkylakeX";
  if (avx2_fma) return "Haswell";
  return nullptr;
}

namespace {

// The commands that decode a few rows at a time, where waking a sleeping thread costs more than
// the work it wakes for.
bool is_decoding_command(const char* command) {
  if (command == nullptr) return false;
  for (const char* decoding : {"translate", "serve", "generate"})
    if (std::strcmp(command, decoding) == 0) return true;
  return false;
}

}  // namespace

const char* openmp_spin_count_for(const char* command) { return is_decoding_command(command) ? "10000" : nullptr; }

const char* blas_thread_timeout_for(const char* command) { return is_decoding_command(command) ? nullptr : "4"; }

namespace {

const char* blas_kernels_for_a_newer_cpu(const char* (*blas_chosen)()) {
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512cd");
  return blas_kernels_to_use(blas_chosen(), avx512, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
}

}  // namespace

std::vector<const char*> set_math_library_environment(const char* command, const char* (*blas_chosen)()) {
  // oneDNN reads its ISA limit at its first primitive, after main starts: not a load-time setting.
  setenv("DNNL_MAX_CPU_ISA", kOneDnnMaxIsa, 0);
  std::vector<const char*> set;
  // Sets `name` to `value` where the user has not set it (and `value` is not null).
  const auto set_unless_set = [&](const char* name, const char* value) {
    if (value == nullptr || std::getenv(name) != nullptr || setenv(name, value, 0) != 0) return false;
    set.push_back(name);
    return true;
  };
  if (set_unless_set("OMP_WAIT_POLICY", "PASSIVE")) set_unless_set("GOMP_SPINCOUNT", openmp_spin_count_for(command));
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr)
    set_unless_set("OPENBLAS_CORETYPE", blas_kernels_for_a_newer_cpu(blas_chosen));
  set_unless_set("OPENBLAS_THREAD_TIMEOUT", blas_thread_timeout_for(command));
  set_unless_set("GLIBC_TUNABLES", malloc_tunables_for(command));
  return set;
}

void use_fast_math_library_settings(char** argv) {
  const auto set = set_math_library_environment(argv[0] != nullptr ? argv[1] : nullptr, blas_kernel_name);
  if (set.empty()) return;
  execv("/proc/self/exe", argv);
  // Only reached when the re-execution failed (no /proc, say): leave the environment as found.
  for (const char* name : set) unsetenv(name);
}

}  // namespace yoke
