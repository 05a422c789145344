#include "util/staged_dir.h"

#include <fcntl.h>  // AT_FDCWD
#include <signal.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc 2.28, _GNU_SOURCE)
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

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

// What a killed writer left beside `out`, of processes that are gone: ".NAME.partial-PID" (a
// folder half written, or the old content a completed exchange left to remove) is removed;
// ".NAME.replaced-PID" (the old content moved aside by the two-rename fallback) is put back as
// NAME when NAME is missing, the replacement never having happened, and removed otherwise. Each
// is said on standard error.
void recover_stale_siblings(const fs::path& out) {
  const auto [parent, name] = parent_and_name(out);
  std::error_code ec;
  std::vector<std::pair<fs::path, std::string>> found;
  for (const auto& e : fs::directory_iterator(parent.empty() ? fs::path(".") : parent, ec)) {
    const std::string f = e.path().filename().string();
    for (const std::string tag : {"partial", "replaced"}) {
      const std::string prefix = "." + name + "." + tag + "-";
      if (f.rfind(prefix, 0) != 0) continue;
      const std::string pid = f.substr(prefix.size());
      if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (::kill(pid_t(std::stol(pid)), 0) != 0 && errno == ESRCH) found.emplace_back(e.path(), tag);
    }
  }
  for (const auto& [path, tag] : found) {
    if (tag == "replaced" && !fs::exists(out, ec)) {
      fs::rename(path, out, ec);
      if (!ec) {
        std::cerr << "yoke: " << out.string() << " was missing after a replacement that was killed midway; put back "
                  << "its earlier content from " << path.string() << std::endl;
        continue;
      }
    }
    std::cerr << "yoke: removed " << path.string() << ", left by a writer of " << out.string()
              << " that was killed (" << (tag == "partial" ? "an unfinished or replaced copy" : "the replaced content")
              << ")" << std::endl;
    remove_tree(path.string());
  }
}

// Components of an absolute, normal path (symbolic links resolved where they exist).
fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p), ec);
  if (ec) r = fs::absolute(p).lexically_normal();
  if (!r.has_filename()) r = r.parent_path();  // a trailing slash
  return r;
}

// Whether `inner` is `outer` or lies below it.
bool within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

}  // namespace

void check_out_apart(const std::string& out, const std::string& source, const std::string& what) {
  if (source.empty()) return;
  const fs::path o = resolved(out), s = resolved(source);
  if (o == s) throw input_error(out, 0, "is " + what + " itself (" + source + "): write to another --out");
  if (within(s, o))
    throw input_error(out, 0, "holds " + what + " (" + source + "): writing or replacing it would destroy what is "
                              "read; write to another --out");
  if (within(o, s))
    throw input_error(out, 0, "lies inside " + what + " (" + source + "): write to a folder outside it");
}

StagedDirectory::StagedDirectory(const std::string& out, bool replace, const std::string& command,
                                 const std::vector<std::pair<std::string, std::string>>& sources)
    : out_(out), replace_(replace) {
  std::error_code ec;
  if (out.empty()) throw InputError(command + ": --out is empty: give the directory to write");
  for (const auto& [what, path] : sources) check_out_apart(out, path, what);
  recover_stale_siblings(out);
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
  remove_tree(staging_);  // left by an earlier process with the same pid
  fs::create_directories(staging_, ec);
  if (ec) throw input_error(staging_, 0, "cannot create the directory to write into: " + ec.message());
}

std::string StagedDirectory::as_out(const std::string& message) const {
  std::string m = message;
  for (size_t at = m.find(staging_); at != std::string::npos; at = m.find(staging_, at + out_.size()))
    m.replace(at, staging_.size(), out_);
  return m;
}

StagedDirectory::~StagedDirectory() {
  if (committed_) return;
  remove_tree(staging_);
}

bool StagedDirectory::commit() {
  std::error_code ec;
  const bool existed = fs::exists(out_, ec);
  if (existed) {
    if (!replace_ && !fs::is_empty(out_, ec))
      throw input_error(out_, 0, "was filled while it was being written; nothing was replaced");
    // One step: out_ holds the new folder and staging_ the old, or nothing changed.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, out_.c_str(), RENAME_EXCHANGE) == 0) {
      committed_ = true;
      remove_tree(staging_);
      return true;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
      throw input_error(out_, 0, std::string("cannot put the written directory in place: ") + std::strerror(errno));
    // No exchange on this file system: move the old folder aside first; a kill before the second
    // rename is repaired by the next writer (recover_stale_siblings).
    const fs::path old = sibling(out_, "replaced");
    remove_tree(old.string());
    fs::rename(out_, old, ec);
    if (ec) throw input_error(out_, 0, "cannot move the old directory aside: " + ec.message());
    fs::rename(staging_, out_, ec);
    if (ec) {
      fs::rename(old, out_);
      throw input_error(out_, 0, "cannot put the written directory in place: " + ec.message());
    }
    committed_ = true;
    remove_tree(old.string());
    return true;
  }
  if (const auto parent = fs::path(out_).lexically_normal().parent_path(); !parent.empty())
    fs::create_directories(parent, ec);
  fs::rename(staging_, out_, ec);
  if (ec) throw input_error(out_, 0, "cannot put the written directory in place: " + ec.message());
  committed_ = true;
  return false;
}

}  // namespace yoke
