#include "experiment/experiment_record.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.h"
#include "experiment/experiment_dir.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/version.h"

namespace fs = std::filesystem;

namespace yoke {

namespace {

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

std::string yoke_commit() { return build_commit(); }

std::string machine_description() {
  std::string model;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const double gib = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE)) / (1024.0 * 1024 * 1024);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s, %ld cores, %.0f GiB", model.empty() ? "unknown CPU" : model.c_str(), cores, gib);
  return buf;
}

namespace {

// Any run of the folder finished (its result.json written)?
bool has_finished_run(const std::string& out_dir) {
  std::error_code ec;
  for (const auto& variant : fs::directory_iterator(fs::path(out_dir) / "runs", ec))
    for (const auto& seed : fs::directory_iterator(variant.path(), ec))
      if (fs::exists(seed.path() / "result.json")) return true;
  return false;
}

// The first place where two designs differ, as a JSON pointer and both values.
std::string first_difference(const nlohmann::json& recorded, const nlohmann::json& now) {
  const nlohmann::json patch = nlohmann::json::diff(recorded, now);
  if (patch.empty()) return "";
  const std::string where = patch.front().value("path", std::string("/"));
  const nlohmann::json::json_pointer pointer(where);
  const std::string before = recorded.contains(pointer) ? recorded.at(pointer).dump() : "(absent)";
  const std::string after = now.contains(pointer) ? now.at(pointer).dump() : "(absent)";
  return where + ": " + before + " was registered, this call gives " + after;
}

// The design as a later yoke computes it, less the config keys that yoke added since the record
// was made and that hold their default: a new key with its default changes no registered run, and
// must not lock a folder out of a newer build.
nlohmann::json comparable(nlohmann::json now, const nlohmann::json& recorded) {
  if (!now.contains("variants") || !recorded.contains("variants")) return now;
  const nlohmann::json defaults = Config{}.to_json();
  for (auto& [name, cfg] : now["variants"].items()) {
    if (!recorded["variants"].contains(name)) continue;
    const auto& was = recorded["variants"][name];
    std::vector<std::string> added;
    for (const auto& [key, value] : cfg.items())
      if (!was.contains(key) && defaults.contains(key) && defaults[key] == value) added.push_back(key);
    for (const auto& key : added) cfg.erase(key);
  }
  return now;
}

void check_registration(nlohmann::json& record, const nlohmann::json& design, const std::string& out_dir,
                        const std::string& record_path) {
  const bool recorded = record.contains("registration");
  if (design.is_null() && !recorded) return;
  const nlohmann::json before = recorded ? record["registration"].value("design", nlohmann::json()) : nlohmann::json();
  if (!recorded || before != comparable(design, before)) {
    if (has_finished_run(out_dir)) {
      if (design.is_null())
        throw input_error(record_path, 0,
                          "records a registered design, and the grid has no [registration]: a registered "
                          "experiment's design cannot be dropped once a run has finished; use another --out");
      if (!recorded)
        throw input_error(record_path, 0,
                          "the folder has finished runs and no registration: a design registered after its runs "
                          "is no registration; start the registered grid in another --out");
      throw input_error(record_path, 0,
                        "the registered design cannot change once a run has finished (" +
                            first_difference(before, comparable(design, before)) +
                            "); restore the grid, or start the changed design in another --out");
    }
    // Nothing has finished: the design can still be fixed. What is recorded is the last one given.
    record["registration"] = {{"design", design}, {"recorded", {{"commit", yoke_commit()}, {"date", now_utc()}}}};
    if (design.is_null()) record.erase("registration");
  }
}

}  // namespace

void record_invocation(const Grid& grid, const std::string& grid_path, const std::string& out_dir,
                       const std::vector<std::string>& overrides, const std::string& command, const std::string& metric,
                       const nlohmann::json& design) {
  const fs::path path = experiment_record_path(out_dir);
  nlohmann::json record;
  if (fs::exists(path)) {
    record = read_json(path.string());
  } else {
    std::ifstream in(grid_path);
    std::stringstream text;
    text << in.rdbuf();
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : grid.variants) variants.push_back(v.name);
    std::vector<int> seeds = grid.seeds;
    if (grid.auto_seeds.on())
      for (int s = grid.auto_seeds.min + 1; s <= grid.auto_seeds.max; ++s) seeds.push_back(s);
    record = {{"title", grid.title},   {"baseline", grid.baseline}, {"variants", variants},
              {"seeds", seeds},        {"overrides", overrides},    {"metric", metric},
              {"expected", grid.expected}, {"grid", {{"path", grid_path}, {"text", text.str()}}},
              {"invocations", nlohmann::json::array()}};
    if (grid.auto_seeds.on())
      record["sequential"] = {{"min", grid.auto_seeds.min},
                              {"max", grid.auto_seeds.max},
                              {"looks", grid.auto_seeds.looks()},
                              {"alpha", 0.05 / grid.auto_seeds.looks()},
                              {"rounds", nlohmann::json::array()}};
  }
  check_registration(record, design, out_dir, path.string());
  // The seed paper's rows are a reading of the paper, not of the runs: a grid that gains them
  // later (or corrects them) brings them into an existing folder.
  if (!grid.paper.empty()) record["paper"] = {{"rows", grid.paper}, {"source", grid.paper_source}};
  record["invocations"].push_back(
      {{"command", command}, {"commit", yoke_commit()}, {"machine", machine_description()}, {"started", now_utc()}});
  write_json(path.string(), record);
}

void record_round(const std::string& out_dir, int seeds, const std::vector<std::string>& undecided,
                  const std::string& stopped) {
  const fs::path path = experiment_record_path(out_dir);
  nlohmann::json record = read_experiment_record(out_dir);
  auto& rounds = record["sequential"]["rounds"];
  nlohmann::json kept = nlohmann::json::array();  // a resumed experiment looks again: keep the latest look
  for (const auto& r : rounds)
    if (r.value("seeds", 0) != seeds) kept.push_back(r);
  kept.push_back({{"seeds", seeds}, {"undecided", undecided}});
  rounds = kept;
  if (!stopped.empty()) record["sequential"]["stopped"] = stopped;
  write_json(path.string(), record);
}

nlohmann::json read_experiment_record(const std::string& out_dir) {
  const fs::path path = experiment_record_path(out_dir);
  if (!fs::exists(path))
    throw input_error(path.string(), 0,
                      "missing: a folder written by `yoke experiment` has it (for an older folder, run `yoke "
                      "experiment --grid G --out DIR --report-only` once to write it from the grid)");
  nlohmann::json r = read_json(path.string());
  for (const char* key : {"title", "baseline", "variants", "seeds", "metric"})
    if (!r.contains(key)) throw input_error(path.string(), 0, std::string("has no \"") + key + "\"");
  return r;
}

}  // namespace yoke
