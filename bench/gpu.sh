#!/usr/bin/env bash
# The GPU speed suite: a Transformer-base-sized model (d 512, 6+6 layers, 8 heads, FFN 2048,
# joint V 32000, tie all) trained by yoke and by plain PyTorch (eager, and under torch.compile)
# on the same batches, in this run, on this GPU; model-FLOP utilisation against the GPU's
# measured bf16 matrix-product peak; greedy and beam-5 translation of 1000 sentences.
# The same model with Wu et al. (2019)'s lightweight and dynamic convolutions in place of
# self-attention (kernels 3, 7, 15, 31, 31, 31) trains and decodes in the same run, under the same
# bf16 autocast, for tokens/s side by side with the Transformer.
# Last line: one JSON object with every figure and ratio.
#
#   bench/gpu.sh [--build-dir DIR] [--steps N] [--batch-tokens N]
# Needs a CUDA build of the bench (scripts/gpu-build.sh --target yoke_bench_speed) and python3 with a CUDA PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-gpu steps=30 tokens=12288
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift ;;
    --steps) steps="$2"; shift ;;
    --batch-tokens) tokens="$2"; shift ;;
    *) echo "bench/gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
PYTHON=${PYTHON:-python3}
B=$build/yoke_bench_speed
[ -x "$B" ] || { echo "bench/gpu.sh: no $B; build it with scripts/gpu-build.sh --target yoke_bench_speed" >&2; exit 1; }
out=$(mktemp -d)
W=$out/workload.bin
"$B" --part workload --size base --batch-tokens "$tokens" --batches 8 --out "$W" >/dev/null
step() { echo "  $*" >&2; "$@" | tail -n 1 >> "$out/results.jsonl"; }
echo "bench (GPU): $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $steps steps of ~$tokens tokens per side" >&2
step "$B" --part matmul --device cuda
for r in 1 2; do  # alternating rounds: drift in clocks hits both
  step "$B" --part train --workload "$W" --steps "$steps" --device cuda
  for arch in lightconv dynamicconv; do step "$B" --part train --workload "$W" --steps "$steps" --device cuda --arch "$arch"; done
  step "$PYTHON" bench/reference_pytorch.py train "$W" --steps "$steps" --device cuda
done
step "$PYTHON" bench/reference_pytorch.py train "$W" --steps "$steps" --device cuda --compile || echo "  torch.compile failed" >&2
step "$B" --part greedy --workload "$W" --device cuda
step "$B" --part beam --workload "$W" --device cuda
for arch in lightconv dynamicconv; do
  step "$B" --part greedy --workload "$W" --device cuda --arch "$arch"
  step "$B" --part beam --workload "$W" --device cuda --arch "$arch"
done
step "$PYTHON" bench/reference_pytorch.py greedy "$W" --device cuda --cache --batch 500
"$PYTHON" bench/summarize_gpu.py "$out/results.jsonl"
rm -rf "$out"
