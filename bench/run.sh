#!/usr/bin/env bash
# The CPU speed suite: yoke against a plain PyTorch implementation of the same model and
# decoding loop (bench/reference_pytorch.py, Debian's python3-torch), on the same workload, on
# this machine, in this run. Each part runs in its own process so that its peak RSS is its own.
# Training alternates yoke and PyTorch rounds so that drift in the machine's speed hits both.
# yoke runs its OpenMP threads with OMP_WAIT_POLICY=PASSIVE and lets OpenBLAS's threads sleep at
# once (OPENBLAS_THREAD_TIMEOUT=4; src/util/thread_policy.h); the reference runs with LibTorch's
# defaults (spinning), with PASSIVE, and with yoke's two settings, and the fastest of the three is
# the one yoke is compared against.
# The same model with Wu et al. (2019)'s lightweight and dynamic convolutions in place of
# self-attention (--arch lightconv | dynamicconv) trains and decodes in the same rounds, so the
# architectures' tokens/s stand side by side; --part conv times the convolution's two methods.
# Prints a table; the last line is one JSON object with every figure and ratio.
#
#   bench/run.sh [--quick]      (--quick: 200 sentences, 3 training steps: a smoke run, not a measurement)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=6 sentences=1000 rounds=2
[ "${1:-}" = "--quick" ] && { steps=3; sentences=200; rounds=1; }
[ -x build/yoke ] || bash scripts/build.sh >&2
cmake --build build --target yoke_bench_speed >&2  # not in the default build; rebuilt when stale
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "installing python3-torch (Debian) for the PyTorch reference..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >/dev/null
fi
out=$(mktemp -d)
# yoke picks OpenBLAS's Haswell kernels where OpenBLAS 0.3.21 would fall back to its generic ones
# (src/util/thread_policy.h); the PyTorch reference must run the same kernels.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  kernels=$(build/yoke_bench_speed --part matmul | tail -n 1 | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin).get("blas_kernels", ""))')
  [ -n "$kernels" ] && export OPENBLAS_CORETYPE=$kernels
fi
W=$out/workload.bin
build/yoke_bench_speed --part workload --out "$W" >/dev/null
step() { echo "  $*" >&2; "$@" | tail -n 1 >> "$out/results.jsonl"; }
echo "bench: $(nproc) cores, $steps training steps × $rounds rounds, $sentences sentences, OpenBLAS kernels ${OPENBLAS_CORETYPE:-(its own choice)}" >&2
step build/yoke_bench_speed --part matmul
for r in $(seq "$rounds"); do
  step build/yoke_bench_speed --part train --workload "$W" --steps "$steps"
  for arch in lightconv dynamicconv; do
    step build/yoke_bench_speed --part train --workload "$W" --steps "$steps" --arch "$arch"
  done
  step env -u OMP_WAIT_POLICY -u OPENBLAS_THREAD_TIMEOUT /usr/bin/python3 bench/reference_pytorch.py train "$W" --steps "$steps"
  step env -u OPENBLAS_THREAD_TIMEOUT OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/reference_pytorch.py train "$W" --steps "$steps"
  step env OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4 /usr/bin/python3 bench/reference_pytorch.py train "$W" --steps "$steps"
done
step build/yoke_bench_speed --part profile --workload "$W" --steps "$steps"
step build/yoke_bench_speed --part greedy --workload "$W" --sentences "$sentences"
step build/yoke_bench_speed --part beam --workload "$W" --sentences "$sentences"
for arch in lightconv dynamicconv; do
  step build/yoke_bench_speed --part greedy --workload "$W" --sentences "$sentences" --arch "$arch"
  step build/yoke_bench_speed --part beam --workload "$W" --sentences "$sentences" --arch "$arch"
done
step build/yoke_bench_speed --part conv
for policy in default PASSIVE PASSIVE+OPENBLAS_THREAD_TIMEOUT=4; do
  env=(env -u OMP_WAIT_POLICY -u OPENBLAS_THREAD_TIMEOUT)
  case $policy in PASSIVE) env+=(OMP_WAIT_POLICY=PASSIVE) ;; PASSIVE+*) env+=(OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4) ;; esac
  step "${env[@]}" /usr/bin/python3 bench/reference_pytorch.py greedy "$W" --sentences "$sentences" --cache
  step "${env[@]}" /usr/bin/python3 bench/reference_pytorch.py greedy "$W" --sentences "$sentences"
done
/usr/bin/python3 bench/summarize.py "$out/results.jsonl"
rm -rf "$out"
