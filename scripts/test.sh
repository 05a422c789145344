#!/usr/bin/env bash
# Installs, builds and runs the whole test suite. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build && ctest --output-on-failure -j "$(nproc)" --timeout 900
