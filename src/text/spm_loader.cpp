#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "text/spm_api.h"
#include "util/executable_dir.h"

namespace yoke::spm {
namespace {

// The directory of the shared object this code is linked into, when it is one: the Python module
// (yoke/_yoke*.so) under `import yoke`, whose process is python's, not yoke's. "" in the yoke
// executable itself.
std::string shared_object_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&shared_object_dir), &info) || !info.dli_fname || info.dli_fname[0] != '/')
    return "";
  std::error_code ec;
  if (std::filesystem::equivalent(info.dli_fname, "/proc/self/exe", ec)) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// RTLD_DEEPBIND only where it is needed: when the process already exports protobuf (Debian's
// LibTorch links libprotobuf). Where it does not (PyTorch's wheels keep theirs hidden), a deep-bound
// plugin can bind to other copies of the C++ library's data than the process uses, and the GPU
// machine's CUDA libraries bring such copies: the plugin crashed on load there. YOKE_SPM_DEEPBIND=0/1
// overrides the choice.
int plugin_flags() {
  bool deep = dlsym(RTLD_DEFAULT, "_ZN6google8protobuf11MessageLite14ParseFromArrayEPKvi") != nullptr;
  if (const char* env = std::getenv("YOKE_SPM_DEEPBIND"); env && *env) deep = std::string(env) != "0";
  return RTLD_NOW | RTLD_LOCAL | (deep ? RTLD_DEEPBIND : 0);
}

const Api* load_plugin() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("YOKE_SPM_PLUGIN")) candidates.push_back(env);
  // Beside the module first, before the executable's places: python's bin/../lib/yoke/ may hold
  // another installation's plugin.
  if (auto dir = shared_object_dir(); !dir.empty()) {
#ifdef YOKE_SPM_FROM_MODULE
    // installed: from PREFIX/<python dir>/yoke/ to PREFIX/lib/yoke/ (CMakeLists.txt, install section)
    candidates.push_back(dir + "/" YOKE_SPM_FROM_MODULE "/libyoke_spm.so");
#endif
    candidates.push_back(dir + "/../../libyoke_spm.so");  // the build tree: build/python/yoke/, build/
  }
  if (auto dir = executable_dir(); !dir.empty()) {
    candidates.push_back(dir + "/libyoke_spm.so");
#ifdef YOKE_SPM_FROM_EXE
    // installed: from PREFIX/bin/ to PREFIX/lib/yoke/ (lib/x86_64-linux-gnu/yoke/ under /usr)
    candidates.push_back(dir + "/" YOKE_SPM_FROM_EXE "/libyoke_spm.so");
#endif
  }
#ifdef YOKE_SPM_INSTALL_DIR
  // Where `cmake --install` puts it, for a module or executable moved elsewhere.
  candidates.push_back(std::string(YOKE_SPM_INSTALL_DIR) + "/libyoke_spm.so");
#endif
#ifdef YOKE_SPM_DIR
  candidates.push_back(std::string(YOKE_SPM_DIR) + "/libyoke_spm.so");
#endif
  candidates.push_back("libyoke_spm.so");  // the system search path
  std::string tried;
  for (const auto& path : candidates) {
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) {
      tried += "\n  " + path + " (not found)";
      continue;
    }
    void* handle = dlopen(path.c_str(), plugin_flags());
    if (!handle) { tried += "\n  " + path + " (" + dlerror() + ")"; continue; }
    auto entry = reinterpret_cast<const Api* (*)()>(dlsym(handle, "yoke_spm_api"));
    if (entry) return entry();
    tried += "\n  " + path + " (no yoke_spm_api symbol)";
  }
  throw std::runtime_error("cannot load the SentencePiece plugin libyoke_spm.so; set YOKE_SPM_PLUGIN to its path. Tried:" + tried);
}

}  // namespace

const Api& api() {
  static std::once_flag once;
  static const Api* loaded = nullptr;
  std::call_once(once, [] { loaded = load_plugin(); });
  return *loaded;
}

}  // namespace yoke::spm
