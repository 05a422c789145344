// Removes a file or a directory with everything in it, without following symbolic links: what
// std::filesystem::remove_all does. yoke calls this instead because the PyTorch wheel's
// libtorch.so (2.11, the GPU build) exports its own copy of remove_all(path, error_code&), the
// dynamic linker binds yoke's calls to it, and it crashes (a call through a null pointer) as soon
// as it recurses: `yoke export --force` and `yoke quantize --force` died with SIGSEGV on the H200.
// POSIX nftw has no C++ library symbol to be shadowed.
#pragma once

#include <string>

namespace yoke {

// Deletes `path` (a file, a symbolic link, or a directory tree, depth first). A path that does not
// exist is not an error. Returns "" on success, else the first failure as "PATH: reason"; it
// goes on past a failure, so as much as can be removed is.
std::string remove_tree(const std::string& path);

}  // namespace yoke
