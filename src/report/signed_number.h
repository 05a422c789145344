// A difference as the reports write it: two decimals with its sign ("+0.32", "-0.11").
// `unicode_minus`: a real minus sign ("−0.11"), as in the papers' tables, and never "−0.00".
#pragma once
#include <cstdio>
#include <string>

namespace yoke {

inline std::string signed_number(double v, bool unicode_minus = false) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f", v);
  std::string s = buf;
  if (!unicode_minus) return s;
  if (s == "-0.00") s = "+0.00";
  if (s[0] == '-') s = "\xE2\x88\x92" + s.substr(1);
  return s;
}

}  // namespace yoke
