#!/usr/bin/env bash
# Installs, builds and runs the whole test suite. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# Idle OpenMP threads sleep instead of spinning against OpenBLAS (src/util/thread_policy.h):
# the yoke binary sets this itself, the test binaries read it from here.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 900)
# Once more under another BLAS kernel and one thread: no test may rely on one summation order.
bash scripts/test-numerics.sh build
