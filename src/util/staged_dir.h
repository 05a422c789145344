// An output folder written whole or not at all. Files are written into a hidden sibling
// (".NAME.partial-PID"), which commit() renames to NAME; without commit() (an error, an
// exception) the destructor removes it, so a refusal or a crash midway leaves nothing that a
// retry would trip over. An existing NAME that is not empty is refused (naming what it holds)
// unless `replace`: then commit() swaps the new folder and the old one in one atomic step
// (renameat2's RENAME_EXCHANGE), so NAME holds the old content or the new, never nothing, and
// then removes the old one. On a file system without the exchange, the old folder is first moved
// to ".NAME.replaced-PID", and a writer killed between the two renames leaves NAME missing: the
// next writer puts that folder back before anything else. What a killed writer left (its process
// gone) is removed by the next one, which says so.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace yoke {

// An InputError when `out` is `source`, holds it (a parent), or lies inside it: replacing or
// filling `out` would destroy or change what is being read. `what` names the source ("--model").
void check_out_apart(const std::string& out, const std::string& source, const std::string& what);

class StagedDirectory {
 public:
  // `command` names the writer in messages ("yoke export"). InputError when `out` exists and is
  // not an empty directory (unless replace), when it is or holds or lies in one of `sources`
  // (option name, path), or when the sibling cannot be made.
  StagedDirectory(const std::string& out, bool replace, const std::string& command,
                  const std::vector<std::pair<std::string, std::string>>& sources = {});
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::string& path() const { return staging_; }  // where to write
  // A message about a file being written, with the staged folder's name put back to `out`'s: what
  // the user gave, never the temporary sibling.
  std::string as_out(const std::string& message) const;
  // Renames the staged folder to `out` (replacing it when allowed). Returns whether it replaced one.
  bool commit();

 private:
  std::string out_, staging_;
  bool replace_ = false, committed_ = false;
};

}  // namespace yoke
