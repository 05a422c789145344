#include "config/config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>
#include <limits>
#include <type_traits>

#include "config/key_ranges.h"
#include "util/error.h"
#include "util/regular_file.h"
#include "util/spelling.h"
#include "util/trim.h"

namespace yoke {
namespace {

// Calls f(name, field, declared_choices) for every key, in the order of config_keys.h.
template <class C, class F>
void visit_fields(C& c, F&& f) {
#define YOKE_VISIT_FIELD(name, type, default_value, choices, help) f(#name, c.name, choices);
#define YOKE_SKIP_SECTION(title)
  YOKE_CONFIG_KEYS(YOKE_SKIP_SECTION, YOKE_VISIT_FIELD)
#undef YOKE_VISIT_FIELD
#undef YOKE_SKIP_SECTION
}

std::string at_origin(const std::string& where) { return where.empty() ? "" : " — " + where; }

std::vector<std::string> split_choices(const char* declared) {
  std::vector<std::string> out;
  std::string s = declared;
  for (size_t start = 0; !s.empty() && start <= s.size();) {
    const size_t bar = std::min(s.find('|', start), s.size());
    out.push_back(s.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

// Each parse_value reads a key's text into its field; on failure it returns what was expected.
std::string parse_value(const std::string& v, std::string& out, const char* choices) {
  const auto allowed = split_choices(choices);
  if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) return join_names(allowed);
  out = v;
  return "";
}
std::string parse_value(const std::string& v, int& out, const char*) {
  size_t used = 0;
  try { out = std::stoi(v, &used); } catch (...) { used = 0; }
  return used == v.size() && !v.empty() ? "" : "a whole number";
}
std::string parse_value(const std::string& v, double& out, const char*) {
  size_t used = 0;
  try { out = std::stod(v, &used); } catch (...) { used = 0; }
  return used == v.size() && !v.empty() && std::isfinite(out) ? "" : "a number";
}
std::string parse_value(const std::string& v, bool& out, const char*) {
  if (v == "true" || v == "1" || v == "yes" || v == "on") out = true;
  else if (v == "false" || v == "0" || v == "no" || v == "off") out = false;
  else return "true or false";
  return "";
}
template <class E, class = std::enable_if_t<is_config_enum<E>::value>>
std::string parse_value(const std::string& v, E& out, const char*) {
  if (auto e = enum_from_name<E>(v)) { out = *e; return ""; }
  return join_names(names_of<E>());
}

// The description of a key for the help and the README.
std::string type_of(const int&, const char*) { return "integer"; }
std::string type_of(const double&, const char*) { return "number"; }
std::string type_of(const bool&, const char*) { return "boolean"; }
std::string type_of(const std::string&, const char* choices) { return *choices ? "choice" : "text"; }
template <class E, class = std::enable_if_t<is_config_enum<E>::value>>
std::string type_of(const E&, const char*) { return "choice"; }

std::vector<std::string> choices_of(const std::string&, const char* choices) { return split_choices(choices); }
template <class T>
std::vector<std::string> choices_of(const T&, const char*) {
  if constexpr (is_config_enum<T>::value) return names_of<T>();
  else return {};
}

std::string text_of(const std::string& v) { return v; }
std::string text_of(int v) { return std::to_string(v); }
std::string text_of(bool v) { return v ? "true" : "false"; }
std::string text_of(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {  // the shortest form that reads back the same
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // Whole numbers read better whole: 600, not 6e+02.
  if (std::strchr(buf, 'e') && v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}
template <class E, class = std::enable_if_t<is_config_enum<E>::value>>
std::string text_of(E v) { return name_of(v); }

template <class T>
nlohmann::json json_of(const T& v) {
  if constexpr (is_config_enum<T>::value) return name_of(v);
  else return v;
}

template <class T>
void read_json(const nlohmann::json& j, const char* name, T& out) {
  // A config in a file's header or metadata is checked as a config file is: nlohmann would turn
  // 32.9 into 32 and 2^32 + 1000 into 1000 without a word.
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) throw InputError(std::string(name) + " = " + j.dump() + ": expected true or false");
    out = j.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    const bool whole = j.is_number_integer();
    const bool fits = whole && (j.is_number_unsigned() ? j.get<uint64_t>() <= uint64_t(std::numeric_limits<T>::max())
                                                       : j.get<int64_t>() >= int64_t(std::numeric_limits<T>::min()) &&
                                                             j.get<int64_t>() <= int64_t(std::numeric_limits<T>::max()));
    if (!fits)
      throw InputError(std::string(name) + " = " + j.dump() + ": expected a whole number in [" +
                       std::to_string(std::numeric_limits<T>::min()) + ", " +
                       std::to_string(std::numeric_limits<T>::max()) + "]");
    out = j.get<T>();
  } else if constexpr (is_config_enum<T>::value) {
    out = parse_enum<T>(name, j.get<std::string>());
  } else {
    j.get_to(out);
  }
}

}  // namespace

void Config::set(const std::string& key, const std::string& value, const std::string& where) {
  bool found = false;
  std::string k = key;
  std::replace(k.begin(), k.end(), '-', '_');
  visit_fields(*this, [&](const char* name, auto& field, const char* choices) {
    if (k != name) return;
    found = true;
    if (const std::string expected = parse_value(value, field, choices); !expected.empty())
      throw InputError(k + " = " + value + ": expected " + expected + at_origin(where));
  });
  if (found) {
    if (!where.empty()) origin[k] = where;
    return;
  }
  std::vector<std::string> names;
  for (const auto& info : config_keys()) names.push_back(info.name);
  const std::string best = closest_name(k, names);
  throw InputError("unknown key '" + key + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)") +
                   "; `yoke train --help` lists the keys" + at_origin(where));
}

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = [] {
    std::vector<ConfigKey> out;
    std::string section;
    const Config defaults;
#define YOKE_SECTION(title) section = title;
#define YOKE_DESCRIBE(name, type, default_value, choices, help)                                             \
  out.push_back({#name, section, type_of(defaults.name, choices), text_of(defaults.name),                   \
                 choices_of(defaults.name, choices), help});
    YOKE_CONFIG_KEYS(YOKE_SECTION, YOKE_DESCRIBE)
#undef YOKE_SECTION
#undef YOKE_DESCRIBE
    return out;
  }();
  return keys;
}

std::string config_keys_markdown() {
  auto cell = [](std::string s) {
    for (size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
    return s;
  };
  std::string out = "| key | type | default | meaning |\n| --- | --- | --- | --- |\n", section;
  for (const auto& k : config_keys()) {
    if (k.section != section) out += "| **" + (section = k.section) + "** | | | |\n";
    std::string type = k.type;
    if (const KeyRange* r = key_range(k.name)) type += ", " + range_text(*r);
    if (!k.choices.empty()) {
      type = "";
      for (const auto& c : k.choices) type += (type.empty() ? "`" : ", `") + c + "`";
    }
    out += "| `" + k.name + "` | " + cell(type) + " | " + (k.default_value.empty() ? "" : "`" + k.default_value + "`") +
           " | " + cell(k.help) + " |\n";
  }
  return out;
}

nlohmann::json Config::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  visit_fields(*this, [&](const char* name, const auto& field, const char*) { j[name] = json_of(field); });
  return j;
}

Config Config::from_json(const nlohmann::json& j) {
  Config c;
  visit_fields(c, [&](const char* name, auto& field, const char*) {
    if (j.contains(name)) read_json(j.at(name), name, field);
  });
  return c;
}

void Config::validate() const {
  // " — FILE line N" for the key that was set there (nothing for a default).
  auto from = [&](const char* key) {
    const auto it = origin.find(key);
    return it == origin.end() ? std::string() : at_origin(it->second);
  };
  // Text keys set in code rather than read: their values must still be allowed ones.
  visit_fields(*this, [](const char* name, const auto& field, const char* choices) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::string>) {
      std::string copy;
      if (const std::string expected = parse_value(field, copy, choices); !expected.empty())
        throw InputError(std::string(name) + " = " + field + ": expected " + expected);
    }
  });
  // Every int and double key within its range (config/key_ranges.h), NaN never.
  visit_fields(*this, [&](const char* name, const auto& field, const char*) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, double>) {
      const KeyRange* range = key_range(name);
      if (!range) throw std::logic_error(std::string("config key ") + name + " has no range in config/key_ranges.cpp");
      if (!in_range(*range, double(field)))
        throw InputError(std::string(name) + " must be " + range_text(*range) + ", got " + text_of(field) + from(name));
    }
  });
  if (d_model % heads != 0) {
    // Two keys meet here, each perhaps from another place: both are named with theirs.
    // "the default" only where it is one: a value read from a checkpoint or an export has no place.
    const Config defaults;
    auto value = [&](const char* key, int v, int default_value) {
      const auto it = origin.find(key);
      if (it != origin.end()) return std::to_string(v) + ", " + it->second;
      return std::to_string(v) + (v == default_value ? ", the default" : "");
    };
    throw InputError("d_model (" + value("d_model", d_model, defaults.d_model) + ") must be divisible by heads (" +
                     value("heads", heads, defaults.heads) + ")");
  }
  if (factored_rank >= d_model)
    throw InputError("factored_rank (" + std::to_string(factored_rank) + ") must be smaller than d_model (" +
                     std::to_string(d_model) + ") to save parameters" + from("factored_rank"));
  if (factored_rank > 0 && tie == Tie::shared_private)
    throw InputError("tie = shared-private does not combine with factored_rank" + from("factored_rank"));
  if (bridging == Bridging::direct) {
    // Kuang et al. 2018 bridge two separate embeddings; with E_s = E_t (all, src-tgt) the term
    // would pull a matrix toward itself, and shared-private already ties the paired rows.
    if (task == Task::lm)
      throw InputError("bridging = direct needs a source side; a language model (task = lm) has none" + from("bridging"));
    if (tie != Tie::none && tie != Tie::decoder)
      throw InputError(std::string("bridging = direct is defined for separate source and target embeddings (tie = none "
                                   "or decoder), not tie = ") + name_of(tie) + from("bridging"));
  }
  if (task == Task::lm && lm_block >= max_positions)
    throw InputError("lm_block (" + std::to_string(lm_block) + ") must be below max_positions (" +
                     std::to_string(max_positions) + ")" + from("lm_block"));
  if (convolutional()) {
    const auto enc = encoder_kernel_sizes(), dec = decoder_kernel_sizes();
    // Wu et al. 2019's kernels grow with depth; one set of weights for every layer needs one size.
    for (const auto& [key, sizes] : {std::pair<const char*, const std::vector<int>&>{"encoder_kernels", enc},
                                     {"decoder_kernels", dec}})
      if (cross_layer && std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<int>()) != sizes.end())
        throw InputError(std::string("cross_layer = true reuses one layer's weights, but ") + key + " = " +
                         (key == std::string("encoder_kernels") ? encoder_kernels : decoder_kernels) +
                         " gives the layers different kernel sizes; set one size (e.g. " + key + " = 7)" +
                         (from(key).empty() ? from("cross_layer") : from(key)));
  }
}

namespace {
// "3, 7,15" → per-layer sizes: one value repeats for every layer, a longer list is cut to `layers`.
std::vector<int> kernel_list(const std::string& key, const std::string& text, int layers, const std::string& where) {
  std::vector<int> sizes;
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = trim(text.substr(start, comma - start));
    int k = 0;
    if (!parse_value(item, k, "").empty() || k < 1)
      throw InputError(key + " = " + text + ": expected positive whole numbers separated by commas" + where);
    sizes.push_back(k);
    start = comma + 1;
  }
  if (sizes.size() == 1) sizes.assign(size_t(std::max(layers, 0)), sizes[0]);
  if (int(sizes.size()) < layers)
    throw InputError(key + " = " + text + ": " + std::to_string(sizes.size()) + " kernel sizes for " +
                     std::to_string(layers) + " layers (give one per layer, or one for all)" + where);
  sizes.resize(size_t(std::max(layers, 0)));
  return sizes;
}
}  // namespace

std::vector<int> Config::encoder_kernel_sizes() const {
  const auto it = origin.find("encoder_kernels");
  return kernel_list("encoder_kernels", encoder_kernels, task == Task::lm ? 0 : encoder_layers,
                     it == origin.end() ? "" : at_origin(it->second));
}

std::vector<int> Config::decoder_kernel_sizes() const {
  const auto it = origin.find("decoder_kernels");
  return kernel_list("decoder_kernels", decoder_kernels, decoder_layers, it == origin.end() ? "" : at_origin(it->second));
}

Config load_config_file(const std::string& path) {
  require_regular_file(path, "config file", uint64_t(16) << 20);
  std::ifstream in(path);
  if (!in) throw input_error(path, 0, "cannot open config file");
  Config cfg;
  std::string line;
  size_t no = 0;
  std::map<std::string, size_t> seen;  // key (with '-' as '_') -> line: a second setting is a mistake, not an override
  while (std::getline(in, line)) {
    ++no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) throw input_error(path, no, "expected 'key = value', got '" + line + "'");
    std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    const bool opens = !value.empty() && value.front() == '"', closes = value.size() >= 2 && value.back() == '"';
    if (opens != closes || (opens && value.size() < 2))
      throw input_error(path, no, "unclosed quote in '" + line + "'");
    if (opens) value = value.substr(1, value.size() - 2);
    std::string normal = key;
    std::replace(normal.begin(), normal.end(), '-', '_');
    if (const auto [it, fresh] = seen.emplace(normal, no); !fresh)
      throw input_error(path, no, key + " is set twice, on line " + std::to_string(it->second) + " and here: keep one");
    cfg.set(key, value, path + " line " + std::to_string(no));
  }
  return cfg;
}

std::string config_file_text(const Config& cfg) {
  std::string text;
  const nlohmann::json values = cfg.to_json();  // items() only refers to it: it must outlive the loop
  for (const auto& [key, value] : values.items()) {
    // Numbers keep every digit (nlohmann writes doubles so that they read back exactly).
    const std::string v = value.is_string() ? value.get<std::string>() : value.dump();
    if (v.find_first_of("#\n\r") != std::string::npos)
      throw InputError(key + " = " + v + ": a value with '#' or a line break cannot go into a config file");
    // Quotes keep a value's outer spaces, and an empty text from reading as a missing value.
    const bool quote = v.empty() || v.front() == ' ' || v.back() == ' ' || v.front() == '"';
    text += key + " = " + (quote ? "\"" + v + "\"" : v) + "\n";
  }
  return text;
}

void apply_overrides(Config& cfg, const std::vector<std::string>& overrides, const std::string& where) {
  for (const auto& kv : overrides) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) throw InputError("expected key=value, got '" + kv + "'" + at_origin(where));
    cfg.set(trim(kv.substr(0, eq)), trim(kv.substr(eq + 1)), where);
  }
}

}  // namespace yoke
