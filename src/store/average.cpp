#include "store/average.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "store/checkpoint.h"
#include "store/model_files.h"
#include "util/dir_lock.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {

std::vector<std::string> average_checkpoints(const std::string& dir, int n, const std::string& out_name) {
  if (n < 1) throw InputError("cannot average the last " + std::to_string(n) + " checkpoints: need at least 1");
  if (!fs::is_directory(dir)) throw input_error(dir, 0, "model directory not found");
  // The output is a checkpoint file in the model directory: a plain name ending in .ykp, never a
  // path elsewhere, never over a file of another kind (a vocabulary, metrics.jsonl, the lock).
  const fs::path given(out_name);
  if (out_name.empty() || given.has_parent_path() || given.filename() != given || out_name == "." || out_name == ".." ||
      given.extension() != ".ykp")
    throw InputError("--out '" + out_name + "': give a checkpoint file name in the model directory, ending in .ykp "
                     "(such as " + kCheckpointAveraged + "), not a path");
  const fs::path out = fs::path(dir) / out_name;
  // The trainer's own files: checkpoint_last must hold its state, checkpoint_best the recorded
  // best update, and numbered ones the update in their name.
  const std::string name = out.filename().string();
  if (name == kCheckpointLast || name == kCheckpointBest || numbered_checkpoint_update(name))
    throw input_error(out.string(), 0, "is a name `yoke train` writes (checkpoint_last, checkpoint_best, "
                                       "checkpoint_u<update>): choose another output name, such as checkpoint_avg.ykp");
  std::error_code ec;
  if (fs::exists(fs::symlink_status(out, ec))) {
    if (!fs::is_regular_file(fs::symlink_status(out, ec)))
      throw input_error(out.string(), 0, "exists and is not a regular file: choose another --out");
    try {
      read_checkpoint_header(out.string());
    } catch (const std::exception&) {
      throw input_error(out.string(), 0, "exists and is not a yoke checkpoint: it is not replaced; choose another --out");
    }
  }
  // A directory a trainer works in (it has the trainer's lock file) is written only while no
  // yoke process holds it; the lock is held until the average is in place.
  std::optional<DirLock> lock;
  const fs::path out_dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  if (fs::exists(lock_file_in(out_dir.string()))) lock.emplace(lock_file_in(out_dir.string()), out_dir.string());
  const auto found = numbered_checkpoints(dir);
  if (found.empty()) throw input_error(dir, 0, "no numbered checkpoints (checkpoint_u*.ykp) to average");
  const size_t take = std::min(size_t(std::max(1, n)), found.size());
  std::vector<std::string> use;
  for (size_t i = found.size() - take; i < found.size(); ++i) use.push_back(found[i].second);
  // One run's checkpoints only (store/run_folder.h): a checkpoint without the record (written
  // before runs had one) is taken as it is.
  std::string run, run_file;
  for (const auto& f : use) {
    const std::string id = read_checkpoint_header(f).meta.value("run", std::string());
    if (id.empty()) continue;
    if (run.empty()) run = id, run_file = f;
    else if (id != run)
      throw input_error(dir, 0, "its checkpoints come from two runs: " + fs::path(run_file).filename().string() +
                                    " (run " + run + ") and " + fs::path(f).filename().string() + " (run " + id +
                                    "); average the checkpoints of one run (remove the other run's, or train again "
                                    "into a fresh save_dir)");
  }

  // Summed in double so that the mean of many checkpoints loses nothing to rounding.
  Checkpoint avg = load_checkpoint(use.back());
  for (auto& [name, t] : avg.tensors)
    if (t.is_floating_point()) t = t.to(at::kDouble);
  for (size_t i = 0; i + 1 < use.size(); ++i) {
    auto c = load_checkpoint(use[i]);
    for (auto& [name, t] : avg.tensors) {
      auto it = c.tensors.find(name);
      if (it == c.tensors.end() || it->second.sizes() != t.sizes())
        throw input_error(use[i], 0, "tensor '" + name + "' missing or of another shape: checkpoints of different models?");
      if (t.is_floating_point()) t.add_(it->second.to(at::kDouble));
    }
  }
  for (auto& [name, t] : avg.tensors)
    if (t.is_floating_point()) t = t.div(double(use.size())).to(at::kFloat);
  avg.meta["averaged"] = nlohmann::json::array();
  for (auto& p : use) avg.meta["averaged"].push_back(fs::path(p).filename().string());
  save_checkpoint(out.string(), avg);
  return use;
}

}  // namespace yoke
