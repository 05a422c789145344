// What the tests of the exports that run in node (test_onnx.cpp: ONNX Runtime; test_hf_export.cpp:
// transformers.js) need: Debian's Python with torch, onnx and sentencepiece (the exporters), node,
// and the npm package under js/node_modules. Each test skips, saying which is missing.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

#include "util/subprocess.h"

namespace yoke::test {

inline const std::filesystem::path kJsDir = std::filesystem::path(YOKE_SOURCE_DIR) / "js";

// Why the exports cannot be run in node here, or "" when they can.
inline std::string missing_js_tools(const std::string& npm_package) {
  const std::string py = std::string(YOKE_PYTHON) + " -c 'import torch, onnx, sentencepiece' >/dev/null 2>&1";
  if (std::system(py.c_str()) != 0)
    return std::string(YOKE_PYTHON) + " cannot import torch, onnx and sentencepiece (Debian: apt-get install " +
           "python3-torch python3-onnx python3-sentencepiece)";
  if (find_on_path("node").empty()) return "no node on PATH (Debian: apt-get install nodejs)";
  if (!std::filesystem::exists(kJsDir / "node_modules" / npm_package))
    return "no " + npm_package + " in js/node_modules (cd js && npm ci)";
  return "";
}

}  // namespace yoke::test
