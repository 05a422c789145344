#!/usr/bin/env bash
# yoke against ONNX Runtime as a peer: the same model decodes the same sentences with
#   yoke fp32, yoke int8 (`yoke quantize`), ORT fp32 (`yoke export --format onnx`, js/translate.js in
#   onnxruntime-node) and ORT int8 (python/onnx_int8.py: ORT's dynamic MatMul quantization),
# greedy and beam 4, on the same thread count, alternated in one run (yoke, ORT, yoke, ORT, ... for
# several rounds) so that drift in the machine's speed hits both. Rates are each program's own
# (model loading excluded): `yoke translate`'s and js/translate.js's "sentences/s".
#
#   bench/decode_onnx.sh MODEL_DIR SRC_FILE [--rounds R] [--threads T] [--sentences N]
#       MODEL_DIR: a trained fp32 translation model; SRC_FILE: source text, one sentence a line
# Prints a Markdown table (median of the rounds, ratios yoke / ORT per round) and how many
# translations each ORT row shares with its yoke row.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bench/decode_onnx.sh MODEL_DIR SRC_FILE [--rounds R] [--threads T] [--sentences N]"
model=${1:?$usage}
src_in=${2:?$usage}
shift 2
rounds=3 threads=1 sentences=1000
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --sentences) sentences=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[ -x build/yoke ] || bash scripts/build.sh >&2
[ -d js/node_modules/onnxruntime-node ] || (cd js && npm ci --no-audit --no-fund --onnxruntime-node-install=skip >&2)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
head -n "$sentences" "$src_in" >"$out/src.txt"
# The three other models, made here from the fp32 one (not timed).
build/yoke quantize --model "$model" --out "$out/yoke-int8" 2>"$out/prep.log"
build/yoke export --model "$model" --out "$out/ort-fp32" --format onnx 2>>"$out/prep.log"
/usr/bin/python3 python/onnx_int8.py "$out/ort-fp32" "$out/ort-int8" 2>>"$out/prep.log"

rate() { sed -n 's/.*(\([0-9.]*\) sentences\/s).*/\1/p' "$1" | tail -n 1; }
run_yoke() {  # DIR BEAM TAG
  build/yoke translate --model "$1" --input "$out/src.txt" --beam "$2" --threads "$threads" --workers 1 \
    >"$out/$3.txt" 2>"$out/$3.log"
  echo "$3 $(rate "$out/$3.log")" >>"$out/rates"
}
run_ort() {  # DIR BEAM TAG
  node js/translate.js "$1" --input "$out/src.txt" --beam "$2" --threads "$threads" --batch 32 \
    >"$out/$3.txt" 2>"$out/$3.log"
  echo "$3 $(rate "$out/$3.log")" >>"$out/rates"
}
echo "bench: $(wc -l <"$out/src.txt") sentences, $threads thread(s) each, $rounds rounds; $(nproc) cores; $(uptime)" >&2
# The processor and the flags that decide the kernels (AVX-512, VNNI, BF16, AMX), for the table's caption.
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512_vnni|avx_vnni|avx512_bf16|amx_bf16|amx_int8)$' | tr '\n' ' ')
echo "processor: $cpu; $flags" >&2
for r in $(seq "$rounds"); do
  for beam in 1 4; do
    run_yoke "$model" "$beam" "yoke-fp32-b$beam"
    run_ort "$out/ort-fp32" "$beam" "ort-fp32-b$beam"
    run_yoke "$out/yoke-int8" "$beam" "yoke-int8-b$beam"
    run_ort "$out/ort-int8" "$beam" "ort-int8-b$beam"
  done
  echo "  round $r done; $(uptime)" >&2
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
rates = {}
for line in open(f"{out}/rates"):
    tag, value = line.split()
    rates.setdefault(tag, []).append(float(value))
def lines(tag):
    return open(f"{out}/{tag}.txt", encoding="utf-8").read().splitlines()
print("| search | precision | yoke sent/s | ORT sent/s | yoke / ORT (per round) | same outputs |")
print("| :--- | :--- | ---: | ---: | ---: | ---: |")
for beam in (1, 4):
    for prec in ("fp32", "int8"):
        y, o = rates[f"yoke-{prec}-b{beam}"], rates[f"ort-{prec}-b{beam}"]
        ratios = [a / b for a, b in zip(y, o)]
        same = sum(a == b for a, b in zip(lines(f"yoke-{prec}-b{beam}"), lines(f"ort-{prec}-b{beam}")))
        name = "greedy" if beam == 1 else f"beam {beam}"
        print(f"| {name} | {prec} | {statistics.median(y):.1f} | {statistics.median(o):.1f} | "
              f"**{statistics.median(ratios):.2f}** ({', '.join(f'{r:.2f}' for r in ratios)}) | "
              f"{same} / {len(lines(f'yoke-{prec}-b{beam}'))} |")
print()
for who in ("yoke", "ort"):
    for beam in (1, 4):
        i, f = rates[f"{who}-int8-b{beam}"], rates[f"{who}-fp32-b{beam}"]
        name = "greedy" if beam == 1 else f"beam {beam}"
        print(f"{who} int8 / fp32, {name}: {statistics.median([a / b for a, b in zip(i, f)]):.2f}")
PY
echo "yoke int8: $(grep -o 'products in .*' "$out/yoke-int8-b1.log" | tail -n 1)"
