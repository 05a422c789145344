#!/usr/bin/env bash
# Installs dependencies and builds yoke into build/ (Release). Usage: scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
