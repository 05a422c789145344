// An output folder written whole or not at all. Files are written into a hidden sibling
// (".NAME.partial-PID"), which commit() renames to NAME; without commit() (an error, an
// exception) the destructor removes it, so a refusal or a crash midway leaves nothing that a
// retry would trip over. An existing NAME that is not empty is refused (naming what it holds)
// unless `replace`: then commit() puts the new folder in its place and removes the old one.
// Such siblings of writers that were killed (their process gone) are removed when the next one starts.
#pragma once
#include <string>

namespace yoke {

class StagedDirectory {
 public:
  // `command` names the writer in messages ("yoke export"). InputError when `out` exists and is
  // not an empty directory (unless replace), or when the sibling cannot be made.
  StagedDirectory(const std::string& out, bool replace, const std::string& command);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& path() const { return staging_; }  // where to write
  // Renames the staged folder to `out` (replacing it when allowed). Returns whether it replaced one.
  bool commit();

 private:
  std::string out_, staging_;
  bool replace_ = false, committed_ = false;
};

}  // namespace yoke
