// The run configuration: one flat set of named keys, read from a readable `key = value` file
// and overridable from the command line (`--set key=value` or `--key value`).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config_keys.h"
#include "config/enums.h"

namespace yoke {

// The typed fields, one per key of config_keys.h, with their defaults.
struct Config {
#define YOKE_CONFIG_FIELD(name, type, default_value, choices, help) type name = default_value;
#define YOKE_CONFIG_NO_SECTION(title)
  YOKE_CONFIG_KEYS(YOKE_CONFIG_NO_SECTION, YOKE_CONFIG_FIELD)
#undef YOKE_CONFIG_FIELD
#undef YOKE_CONFIG_NO_SECTION

  // Where each key was last set ("FILE line N", "command line"), for the errors of validate();
  // not saved with the config.
  std::map<std::string, std::string> origin;

  // Sets one key from its text form ('-' in the key reads as '_'). A bad value or an unknown key
  // throws InputError "message — where" (where: "FILE line N", "command line").
  void set(const std::string& key, const std::string& value, const std::string& where = "");
  // Enumerations are written and read by name, so checkpoints hold names.
  nlohmann::json to_json() const;
  static Config from_json(const nlohmann::json&);
  // Checks combinations that single values cannot (e.g. d_model % heads); throws InputError.
  void validate() const;
  // arch = lightconv | dynamicconv: the kernel size of each encoder / decoder layer, read from
  // encoder_kernels / decoder_kernels (see their help); throws InputError for a bad list.
  std::vector<int> encoder_kernel_sizes() const;
  std::vector<int> decoder_kernel_sizes() const;
  bool convolutional() const { return arch != Arch::transformer; }
};

// One key as `yoke train --help` and the README describe it.
struct ConfigKey {
  std::string name, section;
  std::string type;                  // integer | number | boolean | text | choice
  std::string default_value;         // as text
  std::vector<std::string> choices;  // type choice: the allowed values
  std::string help;
};
const std::vector<ConfigKey>& config_keys();

// The keys as a Markdown table (docs/config-keys.md's, between its config-keys markers).
std::string config_keys_markdown();

// Reads `key = value` lines ('#' starts a comment); errors name the file and line.
Config load_config_file(const std::string& path);

// The config as a file load_config_file reads back to the same values (every key, one a line).
// A text value with '#' or a line break cannot be written so: InputError naming the key.
std::string config_file_text(const Config& cfg);

// Applies overrides "key=value" in order; `where` names their origin in error messages.
void apply_overrides(Config& cfg, const std::vector<std::string>& overrides, const std::string& where);

}  // namespace yoke
