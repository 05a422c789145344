// Config from the command line: `--config FILE`, then `--set key=value` and `--key value`
// overrides in the order given (later wins).
#pragma once
#include <string>

#include "config/config.h"

namespace yoke::cli {

struct ConfigArgs {
  Config config;
  bool help = false;
  bool json = false;  // --json (yoke params)
};

ConfigArgs parse_config_args(int argc, char** argv, int first, const std::string& command, const std::string& summary);

}  // namespace yoke::cli
