// Command-line options of one subcommand: `--name value`, `--name=value`, flags, and repeated
// options (e.g. `--set k=v --set k2=v2`). Each subcommand declares what it accepts, so `--help`
// and the errors for unknown options come from one table.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace yoke::cli {

struct OptionSpec {
  std::string name;         // without dashes
  std::string value_name;   // empty: a flag
  std::string help;
  std::string default_value;
  bool repeated = false;
};

class Args {
 public:
  Args(std::string command, std::string summary, std::vector<OptionSpec> specs);
  // Parses argv[first..]; returns false when --help was given (usage already printed).
  bool parse(int argc, char** argv, int first);
  std::string usage() const;

  bool has(const std::string& name) const;
  std::string get(const std::string& name) const;  // the value, or the declared default
  std::string require(const std::string& name) const;
  int get_int(const std::string& name) const;
  double get_double(const std::string& name) const;
  bool flag(const std::string& name) const { return has(name); }
  const std::vector<std::string>& all(const std::string& name) const;  // repeated options
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  const OptionSpec* find(const std::string& name) const;
  std::string command_, summary_;
  std::vector<OptionSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace yoke::cli
