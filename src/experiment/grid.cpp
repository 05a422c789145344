#include "experiment/grid.h"

#include <algorithm>

#include <fstream>
#include <set>
#include <sstream>

#include "report/report_statistics.h"
#include "util/error.h"
#include "util/regular_file.h"
#include "util/trim.h"

namespace yoke {
namespace {

// Variant names become directory names: keep them plain.
bool plain_name(const std::string& n) {
  if (n.empty() || n[0] == '.') return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '+') return false;
  return true;
}

template <class T>
T parse_number(const std::string& value, const std::string& where, const std::string& key) {
  std::istringstream in(value);
  T v{};
  if (!(in >> v) || !(in >> std::ws).eof()) throw InputError(where + ": " + key + " = '" + value + "' is not a number");
  return v;
}

void set_grid_key(Grid& g, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "title") g.title = value;
  else if (key == "config") g.base_config = value;
  else if (key == "baseline") g.baseline = value;
  else if (key == "average_last") g.average_last = parse_number<int>(value, where, key);
  else if (key == "beam") g.beam = parse_number<int>(value, where, key);
  else if (key == "lenpen") g.lenpen = parse_number<double>(value, where, key);
  else if (key == "analyze") {
    if (value != "true" && value != "false") throw InputError(where + ": analyze must be true or false");
    g.analyze = value == "true";
  } else if (key == "seeds" && value.rfind("auto", 0) == 0) {
    // seeds = auto MIN..MAX: seeds 1..MIN first, then one more at a time until decided (runner.h).
    const std::string range = value.substr(4);
    const size_t dots = range.find("..");
    if (dots == std::string::npos)
      throw InputError(where + ": seeds = auto takes a range, e.g. seeds = auto 3..12");
    g.auto_seeds.min = parse_number<int>(range.substr(0, dots), where, key);
    g.auto_seeds.max = parse_number<int>(range.substr(dots + 2), where, key);
    if (g.auto_seeds.min < 2 || g.auto_seeds.max < g.auto_seeds.min)
      throw InputError(where + ": seeds = auto MIN..MAX needs 2 <= MIN <= MAX (a test needs two seeds a variant)");
    g.seeds.clear();
    for (int s = 1; s <= g.auto_seeds.min; ++s) g.seeds.push_back(s);
  } else if (key == "seeds") {
    g.seeds.clear();
    g.auto_seeds = {};
    std::istringstream in(value);
    for (std::string s; in >> s;) g.seeds.push_back(parse_number<int>(s, where, key));
    if (g.seeds.empty()) throw InputError(where + ": seeds needs at least one number");
  } else if (key == "expect") {
    // expect = l2:+0.6 cosine:+0.41 — the effect each variant has in its seed paper.
    std::istringstream in(value);
    for (std::string item; in >> item;) {
      const size_t colon = item.rfind(':');
      if (colon == std::string::npos || colon == 0)
        throw InputError(where + ": expect takes VARIANT:EFFECT items (e.g. expect = l2:+0.6), got '" + item + "'");
      g.expected[item.substr(0, colon)] = parse_number<double>(item.substr(colon + 1), where, key);
    }
  } else if (key == "paper") {
    // paper = vanilla:98.7M,54.5M,0%,27.62 bridging:98.9M,54.5M,0%,27.79 — the seed's rows as printed.
    std::istringstream in(value);
    for (std::string item; in >> item;) {
      const size_t colon = item.rfind(':');
      std::vector<std::string> fields;
      for (size_t start = colon + 1; colon != std::string::npos && start <= item.size();) {
        const size_t comma = std::min(item.find(',', start), item.size());
        fields.push_back(item.substr(start, comma - start));
        start = comma + 1;
      }
      if (colon == std::string::npos || colon == 0 || fields.size() < 3 || fields.size() > 4)
        throw InputError(where + ": paper takes VARIANT:PARAMS,EMB,RED[,SCORE] items (e.g. paper = "
                         "vanilla:98.7M,54.5M,0%,27.62), got '" + item + "'");
      g.paper[item.substr(0, colon)] = fields;
    }
  } else if (key == "paper_source") {
    g.paper_source = value;
  } else {
    throw InputError(where + ": unknown [grid] key '" + key +
                     "' (known: title, config, seeds, baseline, average_last, beam, lenpen, analyze, expect, "
                     "paper, paper_source)");
  }
}

// [registration] keys; `compare` lines are kept with their place and parsed once the metric is known.
struct RegistrationLines {
  std::vector<std::pair<std::string, std::string>> compare;  // value, where
  std::string alpha_where;
};

void set_registration_key(Registration& r, RegistrationLines& lines, const std::string& key, const std::string& value,
                          const std::string& where) {
  if (key == "question") r.question = value;
  else if (key == "metric") r.metric = value;
  else if (key == "test") r.test = value;
  else if (key == "pairing") {
    if (value != "paired" && value != "unpaired") throw InputError(where + ": pairing must be paired or unpaired");
    r.paired = value == "paired";
  } else if (key == "pairing_why") r.pairing_why = value;
  else if (key == "alpha") r.alpha = parse_number<double>(value, where, key);
  else if (key == "compare") lines.compare.emplace_back(value, where);
  else if (key == "seed_plan") r.seed_plan = value;
  else if (key == "stopping") r.stopping = value;
  else
    throw InputError(where + ": unknown [registration] key '" + key +
                     "' (known: question, metric, test, pairing, pairing_why, alpha, compare, seed_plan, stopping)");
}

}  // namespace

Config Grid::run_config(const GridVariant& variant, int seed, const std::vector<std::string>& overrides) const {
  Config cfg = base_config.empty() ? Config{} : load_config_file(base_config);
  for (const GridVariant* section : {&base, &variant})
    for (size_t i = 0; i < section->settings.size(); ++i)
      cfg.set(section->settings[i].first, section->settings[i].second, section->where[i]);
  cfg.seed = seed;
  apply_overrides(cfg, overrides, "command line");
  return cfg;
}

Grid load_grid(const std::string& path, const std::vector<std::string>& overrides) {
  require_regular_file(path, "grid file", uint64_t(16) << 20);
  std::ifstream in(path);
  if (!in) throw input_error(path, 0, "cannot open grid file");
  Grid g;
  g.path = path;
  enum { none, grid, base, variant, registration } section = none;
  RegistrationLines registration_lines;
  size_t registration_line = 0;
  std::string line;
  for (size_t no = 1; std::getline(in, line); ++no) {
    const std::string where = path + ":" + std::to_string(no);
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']') throw input_error(path, no, "section header must end with ']'");
      const std::string head = trim(line.substr(1, line.size() - 2));
      if (head == "grid") section = grid;
      else if (head == "base") section = base;
      else if (head == "registration") {
        if (registration_line) throw input_error(path, no, "a second [registration] section");
        section = registration;
        registration_line = no;
      }
      else if (head.rfind("variant", 0) == 0) {
        const std::string name = trim(head.substr(7));
        if (!plain_name(name))
          throw input_error(path, no, "variant name '" + name + "' must be letters, digits, '-', '_', '.' or '+'");
        for (const auto& v : g.variants)
          if (v.name == name) throw input_error(path, no, "variant '" + name + "' is defined twice");
        g.variants.push_back({name, {}, {}});
        section = variant;
      } else {
        throw input_error(path, no, "unknown section [" + head + "] (known: [grid], [base], [variant NAME], [registration])");
      }
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string::npos) throw input_error(path, no, "expected 'key = value', got '" + line + "'");
    const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    switch (section) {
      case none: throw input_error(path, no, "a setting before any section: start with [grid], [base] or [variant NAME]");
      case grid: set_grid_key(g, key, value, where); break;
      case base: g.base.settings.emplace_back(key, value); g.base.where.push_back(where); break;
      case registration: set_registration_key(g.registration, registration_lines, key, value, where); break;
      case variant:
        g.variants.back().settings.emplace_back(key, value);
        g.variants.back().where.push_back(where);
        break;
    }
  }
  if (g.variants.empty()) throw input_error(path, 0, "no [variant NAME] sections: nothing to run");
  if (g.baseline.empty()) g.baseline = g.variants.front().name;
  bool found = false;
  for (const auto& v : g.variants) found |= v.name == g.baseline;
  if (!found) throw input_error(path, 0, "baseline '" + g.baseline + "' is not one of the variants");
  if (std::set<int>(g.seeds.begin(), g.seeds.end()).size() != g.seeds.size()) throw input_error(path, 0, "a seed is listed twice");
  auto is_variant = [&](const std::string& name) {
    return std::any_of(g.variants.begin(), g.variants.end(), [&](const GridVariant& v) { return v.name == name; });
  };
  for (const auto& [name, effect] : g.expected)
    if (!is_variant(name)) throw input_error(path, 0, "expect names '" + name + "', which is not one of the variants");
  for (const auto& [name, row] : g.paper)
    if (!is_variant(name)) throw input_error(path, 0, "paper names '" + name + "', which is not one of the variants");
  if (g.title.empty()) g.title = path;
  for (const auto& v : g.variants) g.run_config(v, g.seeds.front(), overrides).validate();
  if (registration_line) {
    const std::string where = path + ":" + std::to_string(registration_line);
    const std::string metric = g.run_config(g.variants.front(), g.seeds.front(), overrides).task == Task::lm ? "ppl" : "bleu";
    for (const auto& [value, at] : registration_lines.compare) {
      try {
        g.registration.comparisons.push_back(parse_registered_comparison(value, report_detail::lower_is_better(metric)));
      } catch (const std::invalid_argument& e) {
        throw InputError(at + ": " + e.what());
      }
    }
    std::vector<std::string> names;
    for (const auto& v : g.variants) names.push_back(v.name);
    if (const auto problem = registration_problem(g.registration, names, metric))
      throw InputError(where + ": [registration]: " + *problem);
    if (g.auto_seeds.on())
      throw InputError(where + ": a registered grid lists its seeds (seeds = 1 2 ...): seeds = auto adds them by "
                               "looking at the results, which the registration's single reading does not allow for");
    if (!g.expected.empty())
      throw InputError(where + ": a registered grid gives the seed's effects in its compare lines; drop [grid] expect");
  }
  return g;
}

nlohmann::json registered_design(const Grid& grid, const std::vector<std::string>& overrides) {
  nlohmann::json variants = nlohmann::json::object();
  for (const auto& v : grid.variants) {
    nlohmann::json cfg = grid.run_config(v, grid.seeds.front(), overrides).to_json();
    cfg.erase("threads");
    cfg.erase("seed");
    variants[v.name] = cfg;
  }
  return {{"registration", registration_json(grid.registration)},
          {"seeds", grid.seeds},
          {"baseline", grid.baseline},
          {"average_last", grid.average_last},
          {"beam", grid.beam},
          {"lenpen", grid.lenpen},
          {"variants", variants}};
}

}  // namespace yoke
