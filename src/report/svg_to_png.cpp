#include "report/svg_to_png.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <vector>

#include "util/subprocess.h"

namespace yoke {
namespace {

// A path that no program can mistake for an option.
std::string plain_path(const std::string& p) { return (!p.empty() && p[0] == '-') ? "./" + p : p; }

bool non_empty_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

// The converter calls that failed in this process, by program and first argument (inkscape has
// two ways): not tried again, since a report converts a picture per chart and a converter that
// cannot read one SVG of ours reads none (a stand-in `convert` that only passes pictures to
// Python took ~0.35 s a call through pyenv's shims).
struct FailedTries {
  std::mutex mutex;
  std::set<std::string> keys;
};
FailedTries& failed_tries() {
  static FailedTries failed;
  return failed;
}
std::string try_key(const std::vector<std::string>& argv) { return argv[0] + "\n" + argv[1]; }

}  // namespace

bool svg_to_png(const std::string& svg_path, const std::string& png_path) {
  if (!non_empty_file(svg_path)) return false;
  const std::string in = plain_path(svg_path);
  // Converted beside the target, renamed at the end: a failure leaves no partial PNG behind.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = plain_path(png_path + ".tmp" + std::to_string(::getpid()) + "_" +
                                     std::to_string(counter++) + ".png");
  std::vector<std::vector<std::string>> tries;
  if (auto p = find_on_path("rsvg-convert"); !p.empty()) {
    tries.push_back({p, "--format=png", "--output", tmp, in});
  }
  if (auto p = find_on_path("inkscape"); !p.empty()) {
    tries.push_back({p, "--export-type=png", "--export-filename=" + tmp, in});  // 1.x
    tries.push_back({p, "-z", "-e", tmp, in});                                 // 0.92
  }
  if (auto p = find_on_path("convert"); !p.empty()) {
    tries.push_back({p, "-background", "white", "svg:" + in, "png:" + tmp});
  }
  for (const auto& argv : tries) {
    FailedTries& failed = failed_tries();
    {
      std::lock_guard<std::mutex> lock(failed.mutex);
      if (failed.keys.count(try_key(argv))) continue;
    }
    std::remove(tmp.c_str());
    if (run_quietly(argv, 60) && non_empty_file(tmp)) {
      if (std::rename(tmp.c_str(), png_path.c_str()) == 0) return true;
      break;  // converted, but the PNG cannot be put in place: another converter would not help
    }
    std::lock_guard<std::mutex> lock(failed.mutex);
    failed.keys.insert(try_key(argv));
  }
  std::remove(tmp.c_str());
  return false;
}

}  // namespace yoke
