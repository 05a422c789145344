#!/usr/bin/env bash
# Reruns the torch tests with sums taken in other orders, so that a test that holds only for one
# BLAS kernel family or thread count (an exact float comparison where rounding differs, a toy
# model's threshold at the edge of what it learns) fails here instead of on the next machine.
#
#   scripts/test-numerics.sh [build dir]        one other kernel family, one thread (scripts/test.sh)
#   scripts/test-numerics.sh --all [build dir]  every family this processor can run × 1 and 2 threads,
#                                               then each threshold test's smallest margin
#
# --all takes about 50 minutes on 2 cores (14 runs of 3.5-4.5 minutes); it is not part of the test
# command. Run it before submitting a change that adds or loosens a float threshold or touches
# what tests compute (the model, the loss, decoding, the optimizer), and when a new processor
# family appears. Every test
# whose margin (tests/torch/margin.h: how many times over it clears its threshold) is below 2 on
# any family is to be fixed. Its table also goes to BUILD/numerics-margins.tsv (every run's
# margins: BUILD/numerics-margins.raw).
# TEST_NUMERICS_CORETYPE names the family of the one-family rerun instead of the choice below;
# TEST_NUMERICS_FAMILIES="Prescott Haswell ..." limits --all to those of its families.
set -uo pipefail
cd "$(dirname "$0")/.."
all=0
if [ "${1:-}" = "--all" ]; then all=1; shift; fi
build="${1:-build}"
binary="$build/yoke_torch_tests"
[ -x "$binary" ] || { echo "test-numerics: no $binary; build first (scripts/build.sh)" >&2; exit 2; }
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

# The kernel family OpenBLAS uses under the given environment (it says so at OPENBLAS_VERBOSE=2).
# Listing the tests runs none; loading the binary is enough for OpenBLAS to say which kernels it
# chose. The last line counts: the test binary may start itself again with other kernels
# (util/thread_policy.h), as `yoke` does.
core_of() { env "$@" OPENBLAS_VERBOSE=2 "$binary" --gtest_list_tests 2>&1 | sed -n 's/^Core: //p' | tail -1; }
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
has() { [[ " $flags " == *" $1 "* ]]; }

# Left out of these reruns: tests whose assertions are about processes, files, signals, options and
# HTTP (exit codes, messages, torn files, status codes), with no float computed here against one
# computed elsewhere; where they compare two runs, both run under the same kernels. They take
# about a third of the suite's time and the normal run has them (CI's 15-minute budget).
not_numeric='DamageCli.*:ServeAbuse.*:OptionsCli.*:ResumeCli.*Refuse*:ResumeCli.AWeightsOnly*:ResumeCli.ACheckpointBest*'
not_numeric+=':ResumeCli.AverageLeaves*:InitFrom.Refuses*:DistributedCli.AKilledRank*:DistributedCli.TheLauncherNames*'
not_numeric+=':DistributedCli.WrongEnvironment*:DistributedCli.CtrlC*:BridgingCli.Refuses*'
not_numeric+=':ResumeCli.ANewRunNever*:ResumeCli.AverageWritesOnly*:Ctranslate2Export.ARefused*'
# The one-family rerun also leaves out suites whose floats are compared only with floats computed
# under the same kernels in the same run (a resumed run against an uninterrupted one, export
# against import, a report rebuilt from its files): no kernel family can make them differ unless
# one run is not deterministic, which the normal run would show. --all keeps them.
same_kernels_only='Results.*:Experiment.*:TranslateCli.*:ExportCli.*:HfImport.*:TrainCli.*:BridgingCli.*:ServeCli.*'
# And, for CI's budget, the suites that train and run other engines for minutes: the CTranslate2
# export's checks (a Multi30k model trained and decoded by both engines; CTranslate2's own products
# do not depend on OpenBLAS's family), the Hugging Face export's (two Multi30k models and
# transformers.js in node) and distributed training's (Gloo ranks as processes): these two were
# half of this rerun's time (~40 s of 80 on 2 cores). --all runs all three on every family.
same_kernels_only+=':Ctranslate2Export.*:HfExport.*:DistributedCli.*'

# run_suite CORETYPE THREADS MARGINS_FILE EXCLUDED: the tests but EXCLUDED in one shard per core,
# side by side (gtest's sharding: each shard runs every n-th test); appends "coretype/threads test
# margin where" lines to MARGINS_FILE and leaves the count of passed tests in suite_passed. Exit 0
# when every shard passed.
suite_passed=0
run_suite() {
  local coretype=$1 threads=$2 margins=$3 excluded=$4
  local shards logs=() pids=() failed=0 passed=0 start=$SECONDS
  shards=$(nproc 2>/dev/null || echo 1)
  for ((i = 0; i < shards; i++)); do
    logs+=("$(mktemp)")
    OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=$threads GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
      "$binary" --gtest_brief=1 --gtest_filter="-$excluded" >"${logs[$i]}" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < shards; i++)); do
    wait "${pids[$i]}"
    local rc=$?
    if [ $rc -ne 0 ]; then
      grep -v '^\[  margin  \]' "${logs[$i]}"
      echo "test-numerics: shard $i of $shards FAILED (exit $rc) under OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=$threads" >&2
      failed=1
    fi
    local n
    # The binary's own summary is its last such line: a test's child process (a worker of
    # `--nproc`) may print a summary of its own earlier.
    n=$(grep -oE '^\[  PASSED  \] [0-9]+' "${logs[$i]}" | tail -n 1 | grep -oE '[0-9]+$' || true)
    passed=$((passed + ${n:-0}))
    sed -n "s|^\[  margin  \] |$coretype/$threads |p" "${logs[$i]}" >>"$margins"
    rm -f "${logs[$i]}"
  done
  echo "test-numerics: OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=$threads: $passed passed, $failed shard(s) failed, $((SECONDS - start)) s"
  suite_passed=$passed
  return $failed
}

default=$(core_of)

if [ $all -eq 0 ]; then
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
  echo "test-numerics: $binary under OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=1 (OpenBLAS kernels: ${used:-unknown}; the normal run's: ${default:-unknown})"
  if [ -n "$default" ] && [ "$used" = "$default" ]; then
    echo "test-numerics: warning: OpenBLAS kept the normal run's kernels; only the thread count differs" >&2
  fi
  start=$SECONDS
  run_suite "$coretype" 1 /dev/null "$not_numeric:$same_kernels_only" || exit 1
  # A shell error inside run_suite ends it early without its status: no count means no pass.
  [ "$suite_passed" -gt 0 ] || { echo "test-numerics: the run ended without a count of passed tests" >&2; exit 1; }
  echo "test-numerics: $((SECONDS - start)) s"
  echo "test-numerics: $suite_passed passed, 0 failed"
  exit 0
fi

# --all: every x86-64 family of OpenBLAS 0.3.21 whose instructions this processor has (a family
# it lacks would crash on its first product).
families=(Prescott Core2)
has avx && families+=(SandyBridge)
has avx2 && has fma && families+=(Haswell Zen)
has avx512f && has avx512bw && has avx512dq && has avx512vl && families+=(SkylakeX)
has avx512f && has avx512_bf16 && families+=(Cooperlake)
if [ -n "${TEST_NUMERICS_FAMILIES:-}" ]; then
  chosen=()
  for f in "${families[@]}"; do [[ " $TEST_NUMERICS_FAMILIES " == *" $f "* ]] && chosen+=("$f"); done
  families=("${chosen[@]}")
fi
echo "test-numerics --all: ${families[*]} × 1 and 2 threads; the normal run's kernels: ${default:-unknown}"
margins="$build/numerics-margins.raw"
: >"$margins"
failures=()
runs=0
for family in "${families[@]}"; do
  used=$(core_of OPENBLAS_CORETYPE="$family")
  [ "$(printf '%s' "$used" | tr '[:upper:]' '[:lower:]')" = "$(printf '%s' "$family" | tr '[:upper:]' '[:lower:]')" ] ||
    echo "test-numerics: note: OPENBLAS_CORETYPE=$family runs OpenBLAS's ${used:-unknown} kernels" >&2
  for threads in 1 2; do
    suite_passed=0
    run_suite "$family" "$threads" "$margins" "$not_numeric" || failures+=("$family/$threads")
    [ "$suite_passed" -gt 0 ] || failures+=("$family/$threads (no count of passed tests)")
    runs=$((runs + 1))
  done
done
# A shell error ends the loop early, silently: every run must have been counted.
[ "$runs" -eq $((${#families[@]} * 2)) ] || failures+=("only $runs of $((${#families[@]} * 2)) runs")

# The table: each test's smallest margin over every run, where it was taken, and under which
# kernels; tests below 2 first.
table="$build/numerics-margins.tsv"
awk '{ key = $2; if (!(key in m) || $3 + 0 < m[key] + 0) { m[key] = $3; at[key] = $4; under[key] = $1 } }
     END { for (k in m) printf "%s\t%s\t%s\t%s\n", m[k], k, under[k], at[k] }' "$margins" |
  sort -g >"$table.body"
{ printf 'margin\ttest\tkernels/threads\twhere\n'; cat "$table.body"; } >"$table"
rm -f "$table.body"
echo
echo "Smallest margin of each threshold test over ${#families[@]} families × 2 thread counts (tests/torch/margin.h):"
awk -F'\t' 'NR == 1 { printf "%-8s  %-78s  %-16s  %s\n", $1, $2, $3, $4; next }
            { flag = ($1 + 0 < 2) ? "  < 2: FIX" : ""; printf "%-8.3g  %-78s  %-16s  %s%s\n", $1, $2, $3, $4, flag }' "$table"
close=$(awk -F'\t' 'NR > 1 && $1 + 0 < 2' "$table" | wc -l)
echo "test-numerics --all: $(($(wc -l <"$table") - 1)) threshold tests, $close with a margin below 2; failed runs: ${failures[*]:-none}; table in $table"
[ ${#failures[@]} -eq 0 ] || exit 1
[ "$close" -eq 0 ] || exit 3
