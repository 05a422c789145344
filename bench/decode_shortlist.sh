#!/usr/bin/env bash
# The lexical shortlist (`yoke translate --shortlist`, Marian's --shortlist) against the full
# output layer: the same model translates the same test set with and without it, side by side in
# rounds that alternate the two (drift in the machine's speed hits both), and the table reports
# each one's median wall time, the speed-up and BLEU of both.
#
# The translation table is IBM-2's on the subword training corpus of the data directory
# (`yoke pair --table`, which runs yoke's aligner on it); it is made once per model and kept beside
# it (MODEL_DIR/shortlist.table.tsv), so a rerun only decodes.
#
#   bench/decode_shortlist.sh MODEL_DIR DATA_DIR [--test NAME] [--rounds R] [--beam B] [--k K]
#                             [--frequent F] [--threads T] [--sentences N]
#       MODEL_DIR: a trained translation model; DATA_DIR: its `yoke prepare` directory, with
#       test.NAME.src.txt / .tgt.txt (default flickr2016); --sentences: its first N only (0: all).
# Prints a Markdown table; the last line is one JSON object with every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bench/decode_shortlist.sh MODEL_DIR DATA_DIR [--test NAME] [--rounds R] [--beam B] [--k K] [--frequent F] [--threads T] [--sentences N]"
model=${1:?$usage} data=${2:?$usage}
shift 2
test=flickr2016 rounds=3 beam=5 k=50 frequent=100 threads=$(nproc) sentences=0
# Every option takes one value and sets the variable of its name.
while [ $# -gt 0 ]; do
  case $1 in
    --test | --rounds | --beam | --k | --frequent | --threads | --sentences) [ $# -ge 2 ] && printf -v "${1#--}" '%s' "$2" ;;
    *) false ;;
  esac || { echo "$usage" >&2; exit 2; }
  shift 2
done
test_name=$test
[ -x build/yoke ] || bash scripts/build.sh >&2
src=$data/test.$test_name.src.txt ref=$data/test.$test_name.tgt.txt
table=$model/shortlist.table.tsv
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ ! -s "$table" ]; then
  echo "making the translation table $table (yoke pair --table; once per model)" >&2
  build/yoke pair --data "$data" --out "$out/pairs.tsv" --table "$table.tmp" --threads "$threads" >&2
  mv "$table.tmp" "$table"
fi
if [ "$sentences" -gt 0 ]; then
  head -n "$sentences" "$src" >"$out/src.txt"; head -n "$sentences" "$ref" >"$out/ref.txt"
  src=$out/src.txt ref=$out/ref.txt
fi
common=(--model "$model" --input "$src" --beam "$beam" --threads "$threads")
echo "bench: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $threads threads, beam $beam, shortlist k=$k frequent=$frequent, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$rounds"); do
  for variant in full shortlist; do
    extra=()
    [ "$variant" = shortlist ] && extra=(--shortlist "$table" --shortlist-k "$k" --shortlist-frequent "$frequent")
    start=$(date +%s.%N)
    build/yoke translate "${common[@]}" "${extra[@]}" >"$out/$variant.txt" 2>"$out/$variant.log"
    end=$(date +%s.%N)
    rate=$(sed -n 's/.*translated .* (\([0-9.e+]*\) sentences\/s).*/\1/p' "$out/$variant.log" | tail -n 1)
    echo "$variant $(echo "$end - $start" | bc) $rate" >>"$out/times.txt"
    echo "  round $r $variant: $(tail -n 1 "$out/times.txt" | cut -d' ' -f2) s, $rate sentences/s" >&2
  done
done
for variant in full shortlist; do build/yoke score --hyp "$out/$variant.txt" --ref "$ref" --json | tail -n 1 >"$out/bleu.$variant.json"; done
/usr/bin/python3 - "$out" "$model" "$test_name" "$beam" "$k" "$frequent" "$threads" <<'PY'
import json, statistics, sys
out, model, test, beam, k, frequent, threads = sys.argv[1:]
times = {"full": [], "shortlist": []}
rates = {"full": [], "shortlist": []}
for line in open(f"{out}/times.txt"):
    name, seconds, rate = line.split()
    times[name].append(float(seconds))
    rates[name].append(float(rate))
median = {name: statistics.median(v) for name, v in times.items()}
rate = {name: statistics.median(v) for name, v in rates.items()}
bleu = {name: json.loads(open(f"{out}/bleu.{name}.json").read())["bleu"] for name in times}
same = sum(a == b for a, b in zip(open(f"{out}/full.txt"), open(f"{out}/shortlist.txt")))
# Output length: a model that stops earlier under the shortlist is faster for that reason too.
words = {name: sum(len(l.split()) for l in open(f"{out}/{name}.txt")) for name in times}
total = sum(1 for _ in open(f"{out}/full.txt"))
print(f"| {model} ({test}, beam {beam}) | median wall s (loading included) | median sentences/s (translate's) | BLEU |")
print("| --- | ---: | ---: | ---: |")
print(f"| full output layer | {median['full']:.2f} | {rate['full']:.1f} | {bleu['full']:.2f} |")
print(f"| shortlist k={k}, frequent={frequent} | {median['shortlist']:.2f} | {rate['shortlist']:.1f} | {bleu['shortlist']:.2f} |")
print(f"speed-up {rate['shortlist'] / rate['full']:.2f}x in sentences/s ({median['full'] / median['shortlist']:.2f}x wall), "
      f"BLEU change {bleu['shortlist'] - bleu['full']:+.2f}, {same} of {total} translations identical, "
      f"output words {words['full']} (full) and {words['shortlist']} (shortlist)")
print(json.dumps({"model": model, "test": test, "beam": beam, "k": int(k), "frequent": int(frequent),
                  "threads": int(threads), "seconds": times, "sentences_per_s": rates, "median_seconds": median,
                  "median_sentences_per_s": rate, "bleu": bleu, "speedup": rate["shortlist"] / rate["full"],
                  "speedup_wall": median["full"] / median["shortlist"], "identical": same, "sentences": total,
                  "output_words": words}))
PY
