// yoke's version and the git commit it was built from (cmake/version.cmake writes them at build
// time), for `yoke --version`, `yoke.__version__` and the records that say what made a file.
#pragma once

namespace yoke {

const char* yoke_version();  // "0.1.0", CMake's project version
const char* build_commit();  // 12 hex digits, "+dirty" when built with uncommitted changes; "unknown" outside git

}  // namespace yoke
