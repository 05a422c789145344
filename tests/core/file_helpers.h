// Helpers the core tests share: a fresh temporary directory, a whole file, an error's message.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "util/error.h"

namespace yoke::test {

// TempDir()/yoke_<name>_<pid>, emptied first.
inline std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "yoke_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The message of the InputError thrown by f (fails the test when none is thrown).
template <typename F>
std::string input_error_message(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError thrown";
  return "";
}

}  // namespace yoke::test
