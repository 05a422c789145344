// The run configuration on a command line: --config FILE, then --set key=value and --key value
// in the order given (later settings win). Every key of the config table is an option of the
// command, so its --help lists them all by section, with type, allowed values and default.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "cli/options.h"
#include "config/config.h"

namespace yoke::cli {

class ConfigOptions {
 public:
  explicit ConfigOptions(CLI::App& app);
  // --keys-markdown was given: prints the key table and returns true.
  bool print_requested_table() const;
  // After parsing: the file's settings, then the command line's. Errors name their origin.
  Config read() const;

 private:
  CLI::App& app_;
  std::string file_;
  std::vector<std::string> sets_;
  bool markdown_ = false;
  CLI::Option* set_option_ = nullptr;
  std::map<const CLI::Option*, std::string> key_of_;
};

}  // namespace yoke::cli
