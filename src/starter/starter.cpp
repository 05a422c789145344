// `yoke`, the program users run: it sets the math libraries' environment (util/thread_policy.h)
// and runs the yoke engine, `yoke-engine` in the same folder, with the same arguments.
//
// Why a program of its own: those settings count only when a program starts with them. The
// engine, started without them, loads LibTorch and the ~290 libraries it pulls in (relocations,
// operator registration, their pages: ~0.6 s on a 2-core EPYC guest, docs/performance.md) only to
// start again with them. This program links none of them, so a command loads them once.
// OpenBLAS's own choice of kernels (whether it fell back to its generic ones) comes from OpenBLAS
// itself: libblas.so.3, the library the engine's LibTorch links, loaded here and asked.
//
// `--fork-server` (util/fork_server.h) starts the engine with the environment as it is: its client
// compares that environment with its own.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "util/executable_dir.h"
#include "util/thread_policy.h"

namespace {

// The kernels OpenBLAS picks by itself on this processor, or "" where no OpenBLAS answers.
const char* blas_kernels_openblas_picks() {
  void* blas = dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  return blas ? yoke::blas_kernel_name_in(blas) : "";  // kept loaded: the string is OpenBLAS's, and exec follows
}

}  // namespace

int main(int argc, char** argv) {
  std::error_code error;
  const std::string folder = yoke::executable_dir(error);
  if (folder.empty()) {
    std::fprintf(stderr, "yoke: cannot find the folder yoke runs from (/proc/self/exe): %s\n", error.message().c_str());
    return 127;
  }
  const std::string engine = folder + "/yoke-engine";
  const bool fork_server = argc > 1 && std::strcmp(argv[1], "--fork-server") == 0;
  if (!fork_server) yoke::set_math_library_environment(argc > 1 ? argv[1] : nullptr, blas_kernels_openblas_picks);
  char* empty[] = {const_cast<char*>("yoke"), nullptr};
  execv(engine.c_str(), argc > 0 ? argv : empty);
  std::fprintf(stderr, "yoke: cannot run the yoke engine %s: %s\n", engine.c_str(), std::strerror(errno));
  return 127;
}
