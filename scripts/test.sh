#!/usr/bin/env bash
# Installs, builds and runs the whole test suite. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
bash scripts/build.sh
echo "test.sh: packages and build in $((SECONDS - start)) s"
# The math-library settings `yoke` runs with (src/util/thread_policy.h: idle OpenMP threads
# sleep; SkylakeX's or Haswell's kernels where OpenBLAS falls back to its generic ones; glibc's heap
# kept, util/malloc_tunables.h). The torch test binary
# would set them itself by starting again; exported here, each test process starts once.
while IFS='=' read -r name value; do
  [ -n "$name" ] && export "$name=$value"
done < <(build/yoke_torch_tests --print-math-env)
# One more test process than cores: tests spend part of their time waiting on child processes,
# sockets and timers (2 cores: 153 s at -j3 against 177 s at -j2).
ctest_start=$SECONDS
(cd build && ctest --output-on-failure -j "$(($(nproc) + 1))" --timeout 900)
echo "test.sh: ctest in $((SECONDS - ctest_start)) s"
# Once more under another BLAS kernel and one thread: no test may rely on one summation order.
bash scripts/test-numerics.sh build
