#!/usr/bin/env bash
# A Debian package of yoke: builds the command, the SentencePiece plugin and `import yoke` in a
# build directory of their own with prefix /usr (so the installed files find each other), then
# cpack writes dist/yoke_VERSION_amd64.deb. Its dependencies come from dpkg-shlibdeps (LibTorch,
# SentencePiece, ...) plus libopenblas0-pthread and python3 (CMakeLists.txt, CPack section).
#   scripts/package.sh [BUILD_DIR]        (default build-pkg; about 6 minutes on 2 cores)
# Install and check:  apt-get install ./dist/yoke_*_amd64.deb && yoke --version && /usr/bin/python3 -c "import yoke"
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-pkg}
# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack installs the targets built above, without building all
# (the tests and benchmarks) first.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON >/dev/null
targets=(yoke yoke_spm yoke_man)
if cmake --build "$build" --target help | grep yoke_python >/dev/null; then  # pybind11 found
  targets+=(yoke_python)
fi
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
dist=$PWD/dist
mkdir -p "$dist"
(cd "$build" && cpack -G DEB -B "$dist" >/dev/null)
rm -rf "$dist/_CPack_Packages"
ls -1 dist/*.deb
