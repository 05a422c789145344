#include "cli/args.h"

#include <iostream>

#include "util/error.h"

namespace yoke::cli {

Args::Args(std::string command, std::string summary, std::vector<OptionSpec> specs)
    : command_(std::move(command)), summary_(std::move(summary)), specs_(std::move(specs)) {}

const OptionSpec* Args::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

bool Args::parse(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << usage();
      return false;
    }
    if (a.rfind("--", 0) != 0) { positional_.push_back(a); continue; }
    std::string name = a.substr(2), value;
    const auto eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) { value = name.substr(eq + 1); name = name.substr(0, eq); }
    const OptionSpec* spec = find(name);
    if (!spec) throw InputError("yoke " + command_ + ": unknown option --" + name + " (see `yoke " + command_ + " --help`)");
    if (spec->value_name.empty()) {
      if (inline_value) throw InputError("yoke " + command_ + ": --" + name + " takes no value");
      value = "1";
    } else if (!inline_value) {
      if (i + 1 >= argc) throw InputError("yoke " + command_ + ": --" + name + " needs a value (" + spec->value_name + ")");
      value = argv[++i];
    }
    if (!spec->repeated) values_[name].clear();
    values_[name].push_back(value);
  }
  return true;
}

std::string Args::usage() const {
  std::string out = "usage: yoke " + command_ + " [options]\n\n" + summary_ + "\n\noptions:\n";
  for (const auto& s : specs_) {
    std::string left = "  --" + s.name + (s.value_name.empty() ? "" : " " + s.value_name);
    if (left.size() < 28) left += std::string(28 - left.size(), ' ');
    else left += "\n" + std::string(28, ' ');
    out += left + s.help;
    if (!s.default_value.empty()) out += " (default: " + s.default_value + ")";
    if (s.repeated) out += " [repeatable]";
    out += "\n";
  }
  out += "  --help                    this text\n";
  return out;
}

bool Args::has(const std::string& name) const { return values_.count(name) > 0; }

std::string Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second.back();
  const OptionSpec* s = find(name);
  return s ? s->default_value : "";
}

std::string Args::require(const std::string& name) const {
  if (!has(name)) throw InputError("yoke " + command_ + ": --" + name + " is required (see `yoke " + command_ + " --help`)");
  return get(name);
}

int Args::get_int(const std::string& name) const {
  const std::string v = get(name);
  try { size_t used; int x = std::stoi(v, &used); if (used == v.size()) return x; } catch (...) {}
  throw InputError("yoke " + command_ + ": --" + name + " expects a whole number, got '" + v + "'");
}

double Args::get_double(const std::string& name) const {
  const std::string v = get(name);
  try { size_t used; double x = std::stod(v, &used); if (used == v.size()) return x; } catch (...) {}
  throw InputError("yoke " + command_ + ": --" + name + " expects a number, got '" + v + "'");
}

const std::vector<std::string>& Args::all(const std::string& name) const {
  static const std::vector<std::string> none;
  auto it = values_.find(name);
  return it == values_.end() ? none : it->second;
}

}  // namespace yoke::cli
