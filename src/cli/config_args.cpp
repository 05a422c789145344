#include "cli/config_args.h"

#include <iostream>

#include "util/error.h"

namespace yoke::cli {

static std::string keys_help() {
  std::string out;
  const Config defaults;
  const auto j = defaults.to_json();
  for (const auto& key : Config::keys()) out += "  " + key + " = " + j.at(key).dump() + "\n";
  return out;
}

ConfigArgs parse_config_args(int argc, char** argv, int first, const std::string& command, const std::string& summary) {
  ConfigArgs r;
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string config_file;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << "usage: yoke " << command << " [--config FILE] [--set key=value ...] [--key value ...]"
                << (command == "params" ? " [--json]" : "") << "\n\n" << summary
                << "\n\nThe config file holds `key = value` lines ('#' starts a comment). Every key can be\n"
                   "overridden with --set key=value or --key value; later settings win.\n\nkeys and defaults:\n"
                << keys_help();
      r.help = true;
      return r;
    }
    if (a == "--json") { r.json = true; continue; }
    if (a.rfind("--", 0) != 0) throw InputError("yoke " + command + ": unexpected argument '" + a + "'");
    std::string name = a.substr(2), value;
    const auto eq = name.find('=');
    if (name == "config" || name == "set" || eq == std::string::npos) {
      if (eq != std::string::npos) { value = name.substr(eq + 1); name = name.substr(0, eq); }
      else if (i + 1 < argc) value = argv[++i];
      else throw InputError("yoke " + command + ": --" + name + " needs a value");
    } else {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "config") config_file = value;
    else if (name == "set") {
      const auto e = value.find('=');
      if (e == std::string::npos) throw InputError("yoke " + command + ": --set expects key=value, got '" + value + "'");
      overrides.emplace_back(value.substr(0, e), value.substr(e + 1));
    } else overrides.emplace_back(name, value);
  }
  if (!config_file.empty()) r.config = load_config_file(config_file);
  for (const auto& [k, v] : overrides) r.config.set(k, v, "command line");
  return r;
}

}  // namespace yoke::cli
