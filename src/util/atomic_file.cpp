#include "util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "util/error.h"

namespace yoke {
namespace {

// Makes a rename durable; best effort, as some file systems refuse to sync a folder.
void sync_parent_dir(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Unique per process and call, so that two writers of one target never share a temporary.
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  const auto status = std::filesystem::status(path_, ec);
  const bool special = !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status);
  if (!special) tmp_ = temporary_name(path_);
  file_ = std::fopen(special ? path_.c_str() : tmp_.c_str(), "wb");
  if (!file_) throw input_error(path_, 0, std::string("cannot write: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!file_) return;
  std::fclose(file_);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
}

void AtomicFile::fail(const std::string& what, int error) {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  if (!tmp_.empty()) std::remove(tmp_.c_str());
  throw input_error(path_, 0, what + ": " + std::strerror(error));
}

void AtomicFile::write(const void* data, size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) fail("cannot write", errno);
}

void AtomicFile::commit() {
  if (tmp_.empty()) {  // a device or pipe: nothing to sync or rename
    std::FILE* f = file_;
    file_ = nullptr;
    const bool ok = std::fflush(f) == 0 && !std::ferror(f);
    const int e = errno;
    if (std::fclose(f) != 0 || !ok) throw input_error(path_, 0, std::string("cannot write: ") + std::strerror(ok ? errno : e));
    return;
  }
  if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) fail("cannot write", errno);
  std::FILE* f = file_;
  file_ = nullptr;
  if (std::fclose(f) != 0) {
    const int e = errno;
    std::remove(tmp_.c_str());
    throw input_error(path_, 0, std::string("cannot write: ") + std::strerror(e));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp_.c_str());
    throw input_error(path_, 0, std::string("cannot replace: ") + std::strerror(e));
  }
  sync_parent_dir(path_);
}

size_t remove_stale_temporaries(const std::string& dir) {
  size_t removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const size_t at = name.rfind(".tmp");
    if (at == std::string::npos || !e.is_regular_file()) continue;
    const std::string rest = name.substr(at + 4);  // <pid>_<n>
    const size_t us = rest.find('_');
    const auto digits = [](const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; };
    if (us == std::string::npos || !digits(rest.substr(0, us)) || !digits(rest.substr(us + 1))) continue;
    if (std::filesystem::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

void write_file_atomically(const std::string& path, const std::string& bytes) {
  AtomicFile f(path);
  f.write(bytes.data(), bytes.size());
  f.commit();
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  std::ostringstream text;
  fill(text);
  write_file_atomically(path, text.str());
}

void copy_file_atomically(const std::string& from, const std::string& to) {
  std::FILE* in = std::fopen(from.c_str(), "rb");
  if (!in) throw input_error(from, 0, std::string("cannot open: ") + std::strerror(errno));
  AtomicFile out(to);
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, in)) > 0) out.write(buf, n);
  const bool read_error = std::ferror(in);
  std::fclose(in);
  if (read_error) throw input_error(from, 0, "cannot read");
  out.commit();
}

}  // namespace yoke
