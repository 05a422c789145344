#include "util/json_file.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {

nlohmann::json read_json(const std::string& path) {
  require_regular_file(path, "JSON file", uint64_t(256) << 20);  // meta.json, config.json, experiment.json, results
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, 0, "cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past where parsing stopped.
    const size_t upto = std::min(text.size(), e.byte > 0 ? size_t(e.byte - 1) : size_t(0));
    const size_t line = 1 + size_t(std::count(text.begin(), text.begin() + upto, '\n'));
    throw input_error(path, line, std::string("invalid JSON: ") + e.what());
  }
}

std::vector<nlohmann::json> read_json_lines(const std::string& path, const std::string& type) {
  std::vector<nlohmann::json> out;
  require_regular_file(path, "JSON-lines log");
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && (type.empty() || j.value("type", "") == type)) out.push_back(std::move(j));
  }
  return out;
}

void write_json(const std::string& path, const nlohmann::json& value) {
  write_file_atomically(path, value.dump(2) + "\n");
}

std::optional<double> optional_number(const nlohmann::json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number()) throw InputError(where + ": \"" + key + "\" is not a number");
  return j[key].get<double>();
}

std::optional<std::string> optional_string(const nlohmann::json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_string()) throw InputError(where + ": \"" + key + "\" is not a string");
  return j[key].get<std::string>();
}

}  // namespace yoke
