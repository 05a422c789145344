#!/usr/bin/env bash
# yoke against its two peers on the same model and sentences:
#   yoke         fp32, and int8 (`yoke quantize`)
#   ONNX Runtime fp32 (`yoke export --format onnx`, js/translate.js in onnxruntime-node), and int8
#                (python/onnx_int8.py, ORT's dynamic MatMul quantization)
#   CTranslate2  fp32 and int8 (`yoke export --format ctranslate2`, python/yoke_ct2.py with
#                compute_type float32 / int8: CTranslate2 quantizes the fp32 export when it loads it)
# greedy and beam 4, on one thread and on two, in the three ways each can use them:
#   1     yoke --threads 1 --workers 1 | ORT --threads 1 | CT2 inter_threads 1, intra_threads 1
#   2x1   yoke --threads 2 --workers 2 | (ORT: no row)   | CT2 inter_threads 2, intra_threads 1
#         (two batches at once, one thread each)
#   1x2   yoke --threads 2 --workers 1 | ORT --threads 2 | CT2 inter_threads 1, intra_threads 2
#         (one batch at a time on two threads)
# Rounds alternate the programs (yoke, ORT, CT2, yoke, ...) so that drift in the machine's speed hits
# each. Rates are each program's own, model loading excluded: "sentences/s" of `yoke translate`,
# js/translate.js and python/yoke_ct2.py. CTranslate2 decodes each sentence with yoke's length
# limit (docs/export.md, "CTranslate2"), so its outputs are comparable with yoke's.
#
#   bench/decode_peers.sh MODEL_DIR SRC_FILE [--rounds N] [--sentences N] [--only CELLS]
#       MODEL_DIR: a trained fp32 translation model; SRC_FILE: source text, one sentence a line
#       --only: the cells to run, PRECISION-bBEAM-tTHREADS separated by commas (fp32-b4-t1,fp32-b4-t2x1):
#       more rounds of a few cells in the time of all
# CTranslate2 is any `import ctranslate2` python3 finds (PYTHONPATH), else the build in
# ../shared/peers/ctranslate2. ORT needs node, js/node_modules (cd js && npm ci) and python3-onnx;
# without them its rows are left out, and said so.
# Prints a Markdown table: per row the median sentences/s, the median of the per-round ratios
# yoke / peer, and how many of each peer's translations are yoke's.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bench/decode_peers.sh MODEL_DIR SRC_FILE [--rounds N] [--sentences N] [--only CELLS]"
model=${1:?$usage}
src_in=${2:?$usage}
shift 2
rounds=3 sentences=1000 only=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --sentences) sentences=$2; shift 2 ;;
    --only)
      for cell in ${2//,/ }; do
        [[ $cell =~ ^(fp32|int8)-b(1|4)-t(1|2x1|1x2)$ ]] || { echo "bench/decode_peers.sh: --only: no cell $cell (cells: fp32|int8 - b1|b4 - t1|t2x1|t1x2)" >&2; exit 2; }
      done
      only=",$2,"; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[ -x build/yoke ] || bash scripts/build.sh >&2
py=/usr/bin/python3
if ! $py -c 'import sys; sys.path.insert(0, "python"); import yoke_ct2; yoke_ct2.import_ctranslate2()' 2>/dev/null; then
  export PYTHONPATH="$(cd .. && pwd)/shared/peers/ctranslate2/python${PYTHONPATH:+:$PYTHONPATH}"
  $py -c 'import sys; sys.path.insert(0, "python"); import yoke_ct2; yoke_ct2.import_ctranslate2()' || {
    echo "bench: python3 cannot import ctranslate2 (nor from ../shared/peers/ctranslate2; Debian: libdnnl2 libopenblas0 libgomp1 python3-numpy)" >&2
    exit 1
  }
fi
ct2_version=$($py -c 'import sys; sys.path.insert(0, "python"); import yoke_ct2; print(yoke_ct2.import_ctranslate2().__version__)')
have_ort=1
if ! command -v node >/dev/null || [ ! -d js/node_modules/onnxruntime-node ] || ! $py -c 'import onnx, torch' 2>/dev/null; then
  have_ort=0
  echo "note: no node, js/node_modules/onnxruntime-node or python3-onnx/python3-torch: the ONNX Runtime rows are left out" >&2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
head -n "$sentences" "$src_in" >"$out/src.txt"
# The other models, made here from the fp32 one (not timed).
build/yoke quantize --model "$model" --out "$out/yoke-int8" 2>"$out/prep.log"
build/yoke export --model "$model" --out "$out/ct2" --format ctranslate2 2>>"$out/prep.log"
if [ "$have_ort" = 1 ]; then
  build/yoke export --model "$model" --out "$out/ort-fp32" --format onnx 2>>"$out/prep.log"
  $py python/onnx_int8.py "$out/ort-fp32" "$out/ort-int8" 2>>"$out/prep.log"
fi

rate() { sed -n 's/.*(\([0-9.]*\) sentences\/s).*/\1/p' "$1" | tail -n 1; }
run_yoke() {  # PREC BEAM THREADS TAG
  local dir=$model workers=1 threads=1
  [ "$1" = int8 ] && dir=$out/yoke-int8
  case $3 in 2x1) threads=2 workers=2 ;; 1x2) threads=2 workers=1 ;; esac
  build/yoke translate --model "$dir" --input "$out/src.txt" --beam "$2" --threads "$threads" --workers "$workers" \
    >"$out/$4.txt" 2>"$out/$4.log"
  echo "$4 $(rate "$out/$4.log")" >>"$out/rates"
}
run_ort() {  # PREC BEAM THREADS TAG
  [ "$have_ort" = 1 ] && [ "$3" != 2x1 ] || return 0
  local threads=1
  [ "$3" = 1x2 ] && threads=2
  node js/translate.js "$out/ort-$1" --input "$out/src.txt" --beam "$2" --threads "$threads" --batch 32 \
    >"$out/$4.txt" 2>"$out/$4.log"
  echo "$4 $(rate "$out/$4.log")" >>"$out/rates"
}
run_ct2() {  # PREC BEAM THREADS TAG
  local inter=1 intra=1 type=float32
  [ "$1" = int8 ] && type=int8
  case $3 in 2x1) inter=2 ;; 1x2) intra=2 ;; esac
  $py python/yoke_ct2.py translate "$out/ct2" --input "$out/src.txt" --beam "$2" --compute-type "$type" \
    --inter-threads "$inter" --intra-threads "$intra" --batch 32 >"$out/$4.txt" 2>"$out/$4.log"
  echo "$4 $(rate "$out/$4.log")" >>"$out/rates"
}
echo "bench: $(wc -l <"$out/src.txt") sentences, $rounds rounds, CTranslate2 $ct2_version; $(nproc) cores; $(uptime)" >&2
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512f|avx512_vnni|avx_vnni|avx512_bf16|amx_bf16|amx_int8)$' | tr '\n' ' ')
echo "processor: $cpu; $flags" >&2
for r in $(seq "$rounds"); do
  for beam in 1 4; do
    for threads in 1 2x1 1x2; do
      for prec in fp32 int8; do
        tag="$prec-b$beam-t$threads"
        [ -z "$only" ] || [[ $only == *",$tag,"* ]] || continue
        run_yoke "$prec" "$beam" "$threads" "yoke-$tag"
        run_ort "$prec" "$beam" "$threads" "ort-$tag"
        run_ct2 "$prec" "$beam" "$threads" "ct2-$tag"
      done
    done
  done
  echo "  round $r done; $(uptime)" >&2
done
$py - "$out" <<'PY'
import os, statistics, sys
out = sys.argv[1]
rates = {}
for line in open(f"{out}/rates"):
    tag, *value = line.split()
    rates.setdefault(tag, []).append(float(value[0]) if value else float("nan"))
def lines(tag):
    return open(f"{out}/{tag}.txt", encoding="utf-8").read().splitlines()
def cell(tag, yoke_tag):
    if tag not in rates:
        return "—", "—", "—"
    y, p = rates[yoke_tag], rates[tag]
    ratios = [a / b for a, b in zip(y, p) if b > 0]
    same = sum(a == b for a, b in zip(lines(yoke_tag), lines(tag)))
    ratio = f"**{statistics.median(ratios):.2f}** ({', '.join(f'{r:.2f}' for r in ratios)})" if ratios else "—"
    return f"{statistics.median(p):.1f}", ratio, f"{same} / {len(lines(yoke_tag))}"
print("| search | precision | threads | yoke sent/s | ORT sent/s | yoke / ORT | same as yoke | CT2 sent/s | yoke / CT2 | same as yoke |")
print("| :--- | :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for beam in (1, 4):
    for threads in ("1", "2x1", "1x2"):
        for prec in ("fp32", "int8"):
            t = f"{prec}-b{beam}-t{threads}"
            if f"yoke-{t}" not in rates:  # a cell --only left out
                continue
            ort, ct2 = cell(f"ort-{t}", f"yoke-{t}"), cell(f"ct2-{t}", f"yoke-{t}")
            name = "greedy" if beam == 1 else f"beam {beam}"
            print(f"| {name} | {prec} | {threads} | {statistics.median(rates[f'yoke-{t}']):.1f} | "
                  f"{ort[0]} | {ort[1]} | {ort[2]} | {ct2[0]} | {ct2[1]} | {ct2[2]} |")
PY
echo "threads: 1 = one thread; 2x1 = two batches at once on a thread each (yoke --workers 2, CT2 inter_threads 2);"
echo "1x2 = one batch at a time on two threads (yoke --workers 1 --threads 2, ORT --threads 2, CT2 intra_threads 2)"
