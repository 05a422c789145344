#!/usr/bin/env bash
# The decoding benchmark in the shape of CTranslate2's (beam 4, batches of 32 sentences, target
# tokens per second, model loading excluded): yoke fp32, yoke int8 (`yoke quantize`) and the plain
# PyTorch reference (bench/decode_reference.py, Debian's python3-torch, optional) decode the same
# source ids with the same trained model, side by side in one run, in rounds that alternate the
# three so that drift in the machine's speed hits each; the table reports each one's median round.
# The reference's output ids are compared with yoke fp32's (the same model and search should give
# the same translations) and BLEU of the yoke rows is scored against the references.
#
#   bench/decode.sh MODEL_DIR DATA_DIR [TEST_NAME] [--sentences N] [--rounds R] [--threads T] [--workers W]
#       MODEL_DIR: a trained fp32 model (tie all, dot, as configs/multi30k-ende.conf for the reference)
#       DATA_DIR:  its `yoke prepare` directory with test.TEST_NAME.src.txt / .tgt.txt (default flickr2016)
#       --workers: batches yoke decodes at once, each on T / W threads (`yoke translate --workers`).
#                  Default 1, as the PyTorch reference decodes: one batch at a time on T threads
# Prints a Markdown table; the last line is one JSON object with every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:?usage: bench/decode.sh MODEL_DIR DATA_DIR [TEST_NAME] [--sentences N] [--rounds R] [--threads T] [--workers W]}
data=${2:?usage: bench/decode.sh MODEL_DIR DATA_DIR [TEST_NAME] [--sentences N] [--rounds R] [--threads T] [--workers W]}
shift 2
test_name=flickr2016
[ $# -gt 0 ] && [ "${1#--}" = "$1" ] && { test_name=$1; shift; }
sentences=0 rounds=3 threads=$(nproc) workers=1
while [ $# -gt 0 ]; do
  case $1 in
    --sentences) sentences=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x build/yoke ] || bash scripts/build.sh >&2
cmake --build build --target yoke_bench_decode >&2  # not in the default build; rebuilt when stale
src=$data/test.$test_name.src.txt ref=$data/test.$test_name.tgt.txt
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The int8 model, made here from the fp32 one (not timed).
build/yoke quantize --model "$model" --out "$out/int8" 2>"$out/quantize.log" || { cat "$out/quantize.log" >&2; exit 1; }
common=(--input "$src" --sentences "$sentences" --threads "$threads" --beam 4 --batch 32)
# The source ids every row decodes, and the OpenBLAS kernels yoke runs (the reference runs the same).
build/yoke_bench_decode --model "$model" "${common[@]}" --sentences 1 --src-ids-out "$out/src.ids" >"$out/probe.json"
kernels=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1]).get("blas_kernels",""))' "$out/probe.json")
build/yoke_bench_decode --model "$model" "${common[@]}" --src-ids-out "$out/src.ids" >/dev/null 2>&1 || true
have_torch=1
/usr/bin/python3 -c 'import torch' 2>/dev/null || { have_torch=0; echo "note: python3 cannot import torch (Debian python3-torch); the PyTorch row is left out" >&2; }
echo "bench: $(nproc) cores, $threads threads, $workers yoke workers, beam 4, batch 32, $rounds rounds, OpenBLAS kernels ${kernels:-(not OpenBLAS)}" >&2
for r in $(seq "$rounds"); do
  echo "  round $r" >&2
  build/yoke_bench_decode --model "$model" "${common[@]}" --workers "$workers" --hyp-ids-out "$out/fp32.ids" --hyp-out "$out/fp32.txt" | tail -n 1 >>"$out/results.jsonl"
  build/yoke_bench_decode --model "$out/int8" "${common[@]}" --workers "$workers" --hyp-ids-out "$out/int8.ids" --hyp-out "$out/int8.txt" | tail -n 1 >>"$out/results.jsonl"
  if [ "$have_torch" = 1 ]; then
    # The reference gets yoke's OpenMP wait policy and BLAS kernels, so its products run the same code.
    env OMP_WAIT_POLICY=PASSIVE ${kernels:+OPENBLAS_CORETYPE=$kernels} /usr/bin/python3 bench/decode_reference.py \
      "$model/checkpoint_best.ykp" "$out/src.ids" --beam 4 --batch 32 --threads "$threads" --hyp-ids-out "$out/pytorch.ids" \
      | tail -n 1 >>"$out/results.jsonl"
  fi
done
head -n "$(wc -l <"$out/fp32.txt")" "$ref" >"$out/ref.txt"
for impl in fp32 int8; do build/yoke score --hyp "$out/$impl.txt" --ref "$out/ref.txt" --json | tail -n 1 >"$out/bleu.$impl.json"; done
/usr/bin/python3 - "$out" "$have_torch" <<'PY'
import json, statistics, sys
out, have_torch = sys.argv[1], sys.argv[2] == "1"
rows = [json.loads(l) for l in open(f"{out}/results.jsonl")]
impls = ["yoke-fp32", "yoke-int8"] + (["pytorch"] if have_torch else [])
def ids(name):
    return open(f"{out}/{name}.ids").read().splitlines()
def bleu(name):
    return round(json.loads(open(f"{out}/bleu.{name}.json").read())["bleu"], 2)
summary = {}
for impl in impls:
    rs = [r for r in rows if r["impl"] == impl]
    tps = statistics.median(r["tokens_per_s"] for r in rs)
    summary[impl] = {"tokens_per_s": tps, "rounds": [round(r["tokens_per_s"], 1) for r in rs],
                     "target_tokens": rs[0]["target_tokens"], "sentences": rs[0]["sentences"],
                     "peak_rss_mb": max(r["peak_rss_mb"] for r in rs), "threads": rs[0]["threads"]}
fp32 = ids("fp32")
summary["yoke-fp32"]["bleu"] = bleu("fp32")
summary["yoke-int8"]["bleu"] = bleu("int8")
summary["yoke-int8"]["same_as_fp32"] = sum(a == b for a, b in zip(fp32, ids("int8"))) / len(fp32)
if have_torch:
    summary["pytorch"]["same_as_fp32"] = sum(a == b for a, b in zip(fp32, ids("pytorch"))) / len(fp32)
base = summary["yoke-fp32"]["tokens_per_s"]
print("| | target tokens/s (median of rounds) | vs yoke fp32 | rounds | BLEU | outputs = yoke fp32 | peak RSS |")
print("| :--- | ---: | ---: | :--- | ---: | ---: | ---: |")
for impl in impls:
    s = summary[impl]
    same = s.get("same_as_fp32")
    print(f"| {impl} | {s['tokens_per_s']:.0f} | {s['tokens_per_s'] / base:.2f} | {', '.join(map(str, s['rounds']))} | "
          f"{s['bleu'] if s.get('bleu') is not None else ''} | {'' if same is None else f'{100 * same:.1f}%'} | {s['peak_rss_mb']:.0f} MB |")
print(json.dumps(summary))
PY
