#!/usr/bin/env bash
# A Debian package of yoke: builds the command, the SentencePiece plugin, `import yoke` and the man
# page in a build directory of their own with prefix /usr (so the installed files find each other),
# then cpack writes dist/yoke_VERSION_amd64.deb, stripped, with packaging/'s copyright file,
# changelog and prerm. Its dependencies come from dpkg-shlibdeps (LibTorch, SentencePiece, ...)
# plus libopenblas0-pthread and python3 (CMakeLists.txt, install and CPack sections).
#   scripts/package.sh [BUILD_DIR]        (default build-pkg; about 6 minutes on 2 cores)
# Install and check:  apt-get install ./dist/yoke_*_amd64.deb && yoke --version && /usr/bin/python3 -c "import yoke"
# Check the package itself:  lintian dist/yoke_*_amd64.deb
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-pkg}
# The changelog's newest entry must be this version's (lintian, and dpkg's view of the package).
version=$(sed -n 's/^project(yoke VERSION \([^ ]*\) .*/\1/p' CMakeLists.txt)
logged=$(sed -n '1s/^yoke (\([^)]*\)).*/\1/p' packaging/changelog)
if [ "$version" != "$logged" ]; then
  echo "package.sh: packaging/changelog's newest entry is $logged, the project's version $version: add an entry" >&2
  exit 1
fi
# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack installs the targets built above, without building all
# (the tests and benchmarks) first.
# ccache where it is installed: a rebuild of the package after a small change takes seconds.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # what ccache needs to cache the precompiled headers' users (CMakeLists.txt, YOKE_PRECOMPILED_TORCH)
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
  "${launcher[@]}" >/dev/null
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
