#!/usr/bin/env bash
# Reruns the torch tests with sums taken in another order: another OpenBLAS kernel family than
# the one the normal run used, and one OpenMP thread. A test that holds only for one BLAS kernel
# or thread count (an exact float comparison where rounding differs) fails here instead of on
# the next machine. Usage: scripts/test-numerics.sh [build dir]   (scripts/test.sh calls it)
# TEST_NUMERICS_CORETYPE names the kernel family instead of the choice below.
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
binary="$build/yoke_torch_tests"
[ -x "$binary" ] || { echo "test-numerics: no $binary; build first (scripts/build.sh)" >&2; exit 2; }
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

# The kernel family OpenBLAS uses under the given environment (it says so at OPENBLAS_VERBOSE=2).
# Listing the tests runs none; loading the binary is enough for OpenBLAS to say which kernels it chose.
core_of() { env "$@" OPENBLAS_VERBOSE=2 "$binary" --gtest_list_tests 2>&1 | sed -n 's/^Core: //p' | head -1; }
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { [[ " $flags " == *" $1 "* ]]; }

default=$(core_of)
if [ -n "${TEST_NUMERICS_CORETYPE:-}" ]; then
  coretype=$TEST_NUMERICS_CORETYPE
else
  # AVX2+FMA kernels (Haswell, Zen) and AVX-512 ones (SkylakeX, Cooperlake, ...) each get the
  # other's; AVX without FMA (SandyBridge) rounds differently from both.
  case "$(printf '%s' "$default" | tr '[:upper:]' '[:lower:]')" in
    haswell | zen*) coretype=SandyBridge ;;
    *) if has avx2 && has fma; then coretype=Haswell; elif has avx; then coretype=SandyBridge; else coretype=Prescott; fi ;;
  esac
fi
used=$(core_of OPENBLAS_CORETYPE="$coretype")
env_desc="OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=1"
echo "test-numerics: $binary under $env_desc (OpenBLAS kernels: ${used:-unknown}; the normal run's: ${default:-unknown})"
if [ -n "$default" ] && [ "$used" = "$default" ]; then
  echo "test-numerics: warning: OpenBLAS kept the normal run's kernels; only the thread count differs" >&2
fi

# Left out of this rerun: tests whose assertions are about processes, files, signals, options and
# HTTP (exit codes, messages, torn files, status codes), with no float computed here against one
# computed elsewhere; where they compare two runs, both run under the same kernels. They take
# about a third of the suite's time and the normal run has them (CI's 15-minute budget).
not_numeric='DamageCli.*:ServeAbuse.*:OptionsCli.*:ResumeCli.*Refuse*:ResumeCli.AWeightsOnly*:ResumeCli.ACheckpointBest*'
not_numeric+=':ResumeCli.AverageLeaves*:InitFrom.Refuses*:DistributedCli.AKilledRank*:DistributedCli.TheLauncherNames*'
not_numeric+=':DistributedCli.WrongEnvironment*:DistributedCli.CtrlC*:BridgingCli.Refuses*'

# One thread per test process, so the tests run in shards side by side, one per core (gtest's
# sharding: each shard runs every n-th test).
shards=$(nproc 2>/dev/null || echo 1)
start=$SECONDS
logs=() pids=()
for ((i = 0; i < shards; i++)); do
  logs+=("$(mktemp)")
  OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=1 GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
    "$binary" --gtest_brief=1 --gtest_filter="-$not_numeric" >"${logs[$i]}" 2>&1 &
  pids+=($!)
done
failed=0 passed=0
for ((i = 0; i < shards; i++)); do
  wait "${pids[$i]}"
  rc=$?
  if [ $rc -ne 0 ]; then
    cat "${logs[$i]}"
    echo "test-numerics: shard $i of $shards FAILED (exit $rc) under $env_desc" >&2
    failed=1
  fi
  n=$(grep -oE '^\[  PASSED  \] [0-9]+' "${logs[$i]}" | grep -oE '[0-9]+$')
  passed=$((passed + ${n:-0}))
  rm -f "${logs[$i]}"
done
[ $failed -eq 0 ] || exit 1
echo "test-numerics: under $env_desc in $((SECONDS - start)) s ($shards shards)"
echo "test-numerics: $passed passed, 0 failed"
