// The folder of the running program's file (/proc/self/exe), where yoke finds what is installed
// beside it: the engine (src/starter/), the SentencePiece plugin, the exporters' Python scripts.
// "" where /proc cannot say (`error` says why). Header-only: the starter links no yoke library.
#pragma once
#include <filesystem>
#include <string>
#include <system_error>

namespace yoke {

inline std::string executable_dir(std::error_code& error) {
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : exe.parent_path().string();
}

inline std::string executable_dir() {
  std::error_code ignored;
  return executable_dir(ignored);
}

}  // namespace yoke
