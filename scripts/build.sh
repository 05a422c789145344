#!/usr/bin/env bash
# Installs dependencies and builds yoke into build/ (Release). Usage: scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Ninja for a new build directory (an existing one keeps the generator it was made with): on the
# 2-core Xeon the whole build took 467 s with Ninja against 499 s with make, one build each,
# within that machine's noise (docs/testing.md); Ninja schedules the targets' files as one pool.
generator=()
[ -f build/CMakeCache.txt ] || ! command -v ninja >/dev/null || generator=(-G Ninja)
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
