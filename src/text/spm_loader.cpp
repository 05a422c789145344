#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "text/spm_api.h"

namespace yoke::spm {
namespace {

std::string executable_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.parent_path().string();
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
  if (auto dir = executable_dir(); !dir.empty()) {
    candidates.push_back(dir + "/libyoke_spm.so");
    candidates.push_back(dir + "/../lib/yoke/libyoke_spm.so");  // installed: bin/yoke, lib/yoke/
  }
#ifdef YOKE_SPM_INSTALL_DIR
  // Where `cmake --install` puts it: what `import yoke` finds, its process being python's.
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
