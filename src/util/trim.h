// Text without the white space (spaces, tabs, CR, LF) at its ends: how config files, grid files
// and command-line overrides read keys and values.
#pragma once
#include <string>

namespace yoke {

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace yoke
