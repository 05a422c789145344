// The values every numeric config key accepts, checked by Config::validate() before any data is
// read (tests/core/test_config.cpp walks the key table: every int and double key has a range here,
// and rejects a value just outside it). Text keys have their allowed values in config_keys.h.
#pragma once
#include <string>

namespace yoke {

struct KeyRange {
  double lo, hi;         // bounds; ±infinity for none
  bool lo_open, hi_open; // (lo, …) / (…, hi): the bound itself is excluded
};

// The range of an int or double key; nullptr for any other key.
const KeyRange* key_range(const std::string& key);

bool in_range(const KeyRange& r, double v);  // false for NaN

// "positive", ">= 0", "in [0, 1)": what a message says the value must be.
std::string range_text(const KeyRange& r);

}  // namespace yoke
