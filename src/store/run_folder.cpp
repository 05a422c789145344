#include "store/run_folder.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "store/model_files.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {

namespace {

bool is_run_file(const std::string& name) {
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".ykp") == 0) return true;
  if (name == kMetricsLog || name == kPairsFile) return true;
  return std::find(kVocabularyFiles.begin(), kVocabularyFiles.end(), name) != kVocabularyFiles.end();
}

}  // namespace

std::vector<std::string> run_files_in(const std::string& save_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(save_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (is_run_file(name) && !e.is_directory(ec)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_new_run_folder(const std::string& save_dir) {
  if (fs::exists(fs::path(save_dir) / kCheckpointLast)) return;  // a run to resume
  std::vector<std::string> checkpoints;
  for (const auto& f : run_files_in(save_dir))
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".ykp") == 0) checkpoints.push_back(f);
  if (checkpoints.empty()) return;
  std::string names;
  for (size_t i = 0; i < checkpoints.size() && i < 4; ++i) names += (i ? ", " : "") + checkpoints[i];
  if (checkpoints.size() > 4) names += " and " + std::to_string(checkpoints.size() - 4) + " more";
  throw input_error(save_dir, 0,
                    "holds another run's checkpoints (" + names + ") and no " + kCheckpointLast +
                        " to resume from: a new run here would replace some of them and leave the rest beside its "
                        "own. Train into another save_dir, or give `yoke train --force` to remove that run's files "
                        "(checkpoints, " + kMetricsLog + ", vocabularies, pairs) first");
}

void clear_run_folder(const std::string& save_dir, std::ostream& log) {
  const auto files = run_files_in(save_dir);
  if (files.empty()) return;
  for (const auto& f : files) fs::remove(fs::path(save_dir) / f);
  log << "--force: removed " << files.size() << " file" << (files.size() == 1 ? "" : "s") << " of an earlier run from "
      << save_dir << " (";
  for (size_t i = 0; i < files.size(); ++i) log << (i ? ", " : "") << files[i];
  log << ")" << std::endl;
}

std::string new_run_id() {
  std::random_device device;
  std::seed_seq seed{uint64_t(std::chrono::system_clock::now().time_since_epoch().count()), uint64_t(::getpid()),
                     uint64_t(device())};
  std::mt19937_64 rng(seed);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace yoke
