#include "cli/config_options.h"

#include <iostream>

#include "util/error.h"

namespace yoke::cli {
namespace {

// The value placeholder of a key in --help: INT, NUMBER, BOOL, TEXT or {a,b,c}.
std::string placeholder(const ConfigKey& k) {
  if (!k.choices.empty()) {
    std::string out;
    for (const auto& c : k.choices) out += (out.empty() ? "{" : ",") + c;
    return out + "}";
  }
  if (k.type == "integer") return "INT";
  if (k.type == "number") return "NUMBER";
  if (k.type == "boolean") return "BOOL";
  return "TEXT";
}

}  // namespace

ConfigOptions::ConfigOptions(CLI::App& app) : app_(app) {
  app.description(app.get_description() +
                  "\n\nThe config file holds `key = value` lines ('#' starts a comment). Every key below can be\n"
                  "set with --set key=value or --key value; later settings win.");
  app.add_option("--config", file_, "`key = value` lines ('#' starts a comment), read before the other settings")
      ->type_name("FILE");
  set_option_ = add_overrides_option(app, sets_, "set a config key; --KEY VALUE does the same");
  app.add_flag("--keys-markdown", markdown_, "print the config keys as a Markdown table (docs/config-keys.md's) and exit");
  for (const auto& k : config_keys()) {
    std::string names = "--" + k.name, dashed = k.name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    if (dashed != k.name) names += ",--" + dashed;  // accepted as before, not listed
    CLI::Option* o = app.add_option(names, [](const CLI::results_t&) { return true; }, k.help)
                         ->type_name(placeholder(k))
                         ->default_str(k.default_value)
                         ->group(k.section)
                         ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    key_of_[o] = k.name;
  }
}

bool ConfigOptions::print_requested_table() const {
  if (markdown_) std::cout << config_keys_markdown();
  return markdown_;
}

Config ConfigOptions::read() const {
  Config cfg = file_.empty() ? Config{} : load_config_file(file_);
  std::map<const CLI::Option*, size_t> seen;  // occurrences so far: parse_order lists one per use
  for (const CLI::Option* o : app_.parse_order()) {
    const size_t n = seen[o]++;
    if (o == set_option_) {
      // The origin is the argument itself, so an error points at what to fix.
      apply_overrides(cfg, {o->results().at(n)}, "command line: --set " + o->results().at(n));
    } else if (auto k = key_of_.find(o); k != key_of_.end()) {
      cfg.set(k->second, o->results().at(n), "command line: " + o->get_name() + " " + o->results().at(n));
    }
  }
  return cfg;
}

}  // namespace yoke::cli
