#include "util/staged_dir.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <utility>

#include "util/error.h"
#include "util/remove_tree.h"

namespace fs = std::filesystem;

namespace yoke {

namespace {

// `out`'s folder and name, with or without a trailing slash.
std::pair<fs::path, std::string> parent_and_name(const fs::path& out) {
  const fs::path clean = out.lexically_normal();
  if (clean.has_filename()) return {clean.parent_path(), clean.filename().string()};
  return {clean.parent_path().parent_path(), clean.parent_path().filename().string()};
}

fs::path sibling(const fs::path& out, const std::string& tag) {
  const auto [parent, name] = parent_and_name(out);
  return parent / ("." + name + "." + tag + "-" + std::to_string(::getpid()));
}

// What a killed writer left beside `out`: ".NAME.partial-PID" and ".NAME.replaced-PID" folders of
// processes that are gone. Removed before a new write, so a kill costs disk only until the retry.
void remove_stale_siblings(const fs::path& out) {
  const auto [parent, name] = parent_and_name(out);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(parent.empty() ? fs::path(".") : parent, ec)) {
    const std::string f = e.path().filename().string();
    for (const std::string tag : {".partial-", ".replaced-"}) {
      const std::string prefix = "." + name + tag;
      if (f.rfind(prefix, 0) != 0) continue;
      const std::string pid = f.substr(prefix.size());
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (::kill(pid_t(std::stol(pid)), 0) != 0 && errno == ESRCH) remove_tree(e.path().string());
    }
  }
}

}  // namespace

StagedDirectory::StagedDirectory(const std::string& out, bool replace, const std::string& command)
    : out_(out), replace_(replace) {
  std::error_code ec;
  if (fs::exists(out, ec)) {
    if (!fs::is_directory(out, ec))
      throw input_error(out, 0, "exists and is not a directory; " + command + " writes a directory there");
    if (!fs::is_empty(out, ec) && !replace) {
      std::string first;
      for (const auto& e : fs::directory_iterator(out, ec)) {
        first = e.path().filename().string();
        break;
      }
      throw input_error(out, 0, "is not empty (it holds " + first + ", ...); " + command +
                                    " writes a new directory: give another --out, or --force to replace this one "
                                    "and everything in it");
    }
  }
  staging_ = sibling(out, "partial").string();
  remove_stale_siblings(out);
  remove_tree(staging_);  // left by an earlier process with the same pid
  fs::create_directories(staging_, ec);
  if (ec) throw input_error(staging_, 0, "cannot create the directory to write into: " + ec.message());
}

StagedDirectory::~StagedDirectory() {
  if (committed_) return;
  remove_tree(staging_);
}

bool StagedDirectory::commit() {
  std::error_code ec;
  const bool existed = fs::exists(out_, ec);
  fs::path old;
  if (existed) {
    if (!replace_ && !fs::is_empty(out_, ec))
      throw input_error(out_, 0, "was filled while it was being written; nothing was replaced");
    old = sibling(out_, "replaced");
    remove_tree(old.string());
    fs::rename(out_, old, ec);
    if (ec) throw input_error(out_, 0, "cannot move the old directory aside: " + ec.message());
  } else if (const auto parent = fs::path(out_).lexically_normal().parent_path(); !parent.empty()) {
    fs::create_directories(parent, ec);
  }
  fs::rename(staging_, out_, ec);
  if (ec) {
    if (!old.empty()) fs::rename(old, out_);
    throw input_error(out_, 0, "cannot put the written directory in place: " + ec.message());
  }
  committed_ = true;
  if (!old.empty()) remove_tree(old.string());
  return existed;
}

}  // namespace yoke
