#!/usr/bin/env bash
# Installs, builds and runs the default demo (`yoke demo`) on a corpus the demo generates itself.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec build/yoke demo "$@"
