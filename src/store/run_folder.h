// A save_dir belongs to one run. The files `yoke train` writes there (checkpoints, metrics.jsonl,
// the vocabulary copies, the pair file) are its run's; a new run into a folder that holds another
// run's checkpoints, without the checkpoint_last.ykp it could resume from, would replace some of
// them and leave the rest beside its own (a later `average --last 3` mixing two runs), so it is
// refused unless told to start over, which first removes them. Each checkpoint records its run's
// identity ("run" in its meta, kept across resumes) so that averaging can refuse a mix.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace yoke {

// The run files present in save_dir (names, sorted); nothing else in the folder is a run's.
std::vector<std::string> run_files_in(const std::string& save_dir);

// For a run that does not resume (no checkpoint_last.ykp): an InputError naming the checkpoints of
// another run found in save_dir, and the two ways on (another save_dir, or `yoke train --force`).
void check_new_run_folder(const std::string& save_dir);

// `yoke train --force`: removes the run files of save_dir (and nothing else), saying which.
void clear_run_folder(const std::string& save_dir, std::ostream& log);

// A fresh identity for a run: 16 hex digits from the clock and the process, unique in practice.
std::string new_run_id();

}  // namespace yoke
