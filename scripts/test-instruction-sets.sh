#!/usr/bin/env bash
# Reruns the tests of yoke's own float kernels (attention, log-softmax, layer norm: the ones that
# promise the same bits on every x86-64 processor; the beam's candidates, which must rank alike;
# and the int8 product's quantization, against its
# exact reference) as processors without AVX-512, without AVX2 and without AVX would run them,
# under QEMU's user-mode emulation. On the machine itself the program loads only the version its
# processor has (GCC target_clones, or a check of the processor); here each other version runs
# and must give the same bits too.
#
#   scripts/test-instruction-sets.sh [build dir]       needs qemu-user (apt-get install qemu-user)
#
# CPU models: Haswell (AVX2 and FMA, no AVX-512: the AVX2 and AVX versions), SandyBridge (AVX only),
# Nehalem (SSE4.2: the x86-64 baseline versions). About a minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tests="$build/yoke_torch_tests"
[ -x "$tests" ] || { echo "test-instruction-sets: no $tests (build first)" >&2; exit 2; }
command -v qemu-x86_64 >/dev/null || { echo "test-instruction-sets: needs qemu-x86_64 (apt-get install qemu-user)" >&2; exit 2; }
# The math-library settings exported here, so that the test binary does not start itself again
# (util/thread_policy.h): a program started by an emulated execve would run on the real processor.
while IFS='=' read -r name value; do
  [ -n "$name" ] && export "$name=$value"
done < <("$tests" --print-math-env)
filter='SingleQueryAttention.*:RowLogSoftmax.*:RowLayerNorm.*:Int8Matmul.*:BeamCandidates.*'
status=0
for cpu in Haswell SandyBridge Nehalem; do
  # OpenBLAS's kernels for the emulated processor, whatever the environment names (the tests'
  # reference products run on them); OpenBLAS reads the names without regard to case.
  if OPENBLAS_CORETYPE=$cpu qemu-x86_64 -cpu "$cpu" "$tests" --gtest_filter="$filter" --gtest_brief=1 >"$build/instruction-sets-$cpu.log" 2>&1; then
    echo "test-instruction-sets: $cpu: $(sed -n 's/^\[  PASSED  \] \([0-9]* tests\?\).*/\1/p' "$build/instruction-sets-$cpu.log") passed$(sed -n 's/^\[  SKIPPED \] \([0-9]* tests\?\).*/, \1 skipped/p' "$build/instruction-sets-$cpu.log")"
  else
    echo "test-instruction-sets: $cpu: FAILED (log: $build/instruction-sets-$cpu.log)"
    status=1
  fi
done
exit $status
