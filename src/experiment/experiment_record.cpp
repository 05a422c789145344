#include "experiment/experiment_record.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiment/experiment_dir.h"
#include "util/error.h"
#include "util/json_file.h"

namespace fs = std::filesystem;

namespace yoke {

namespace {

std::string first_line_of(const char* command) {
  std::string out;
  if (FILE* p = popen(command, "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, p)) out = buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

std::string yoke_commit() {
  const std::string commit = first_line_of("git rev-parse HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const std::string dirty = first_line_of("git status --porcelain --untracked-files=no 2>/dev/null");
  return commit + (dirty.empty() ? "" : "+dirty");
}

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

void record_invocation(const Grid& grid, const std::string& grid_path, const std::string& out_dir,
                       const std::vector<std::string>& overrides, const std::string& command, const std::string& metric) {
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
