#!/usr/bin/env bash
# Training and decoding speed of trained models side by side, alternated in one run (A, B, C, A,
# B, C, ... for several rounds) so that drift in the machine's speed hits every model alike.
#   Training: each model's own config (the `start` record of its metrics.jsonl) trains again from
#   scratch for --updates updates into a scratch folder, without validation; the rate is the median
#   tokens/s of its log lines after the first (the first holds the start-up).
#   Decoding: `yoke translate` of --src with the model's default checkpoint, at --beam, one worker;
#   the rate is its own "sentences/s" (model loading excluded).
#
#   bench/side_by_side.sh --src FILE [--rounds R] [--updates N] [--beam B] [--threads T]
#                         [--sentences S] NAME=MODEL_DIR NAME=MODEL_DIR ...
# Prints a Markdown table: median rates over the rounds and each model's ratio to the first one,
# per round. Used for seed 001's "the estimators cost nothing at decoding time" and seed 003's
# "shared-private trains and decodes about as fast as vanilla" (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: bench/side_by_side.sh --src FILE [--rounds R] [--updates N] [--beam B] [--threads T] [--sentences S] NAME=MODEL_DIR ..."
rounds=3 updates=60 beam=4 threads=2 sentences=500 src=""
models=()
while [ $# -gt 0 ]; do
  case $1 in
    --src) src=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --updates) updates=$2; shift 2 ;;
    --beam) beam=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --sentences) sentences=$2; shift 2 ;;
    *=*) models+=("$1"); shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[ -n "$src" ] && [ ${#models[@]} -ge 1 ] || { echo "$usage" >&2; exit 2; }
[ -x build/yoke ] || bash scripts/build.sh >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
head -n "$sentences" "$src" >"$out/src.txt"

# Each model's training config as `key = value` lines, from its metrics.jsonl start record.
for m in "${models[@]}"; do
  name=${m%%=*} dir=${m#*=}
  /usr/bin/python3 scripts/run-config.py "$dir/metrics.jsonl" >"$out/$name.conf"
done

train_rate() {  # NAME TAG
  rm -rf "$out/train-$2"
  build/yoke train --config "$out/$1.conf" --set save_dir="$out/train-$2" --set max_updates="$updates" \
    --set max_minutes=0 --set max_epochs=0 --set valid_interval=1000000 --set log_interval=10 \
    --set save_interval=0 --set patience=0 --set threads="$threads" >"$out/train-$2.log" 2>&1
  /usr/bin/python3 - "$out/train-$2/metrics.jsonl" <<'PY'
import json, statistics, sys
rates = [r["tokens_per_s"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "train"]
print(statistics.median(rates[1:] or rates))
PY
}
decode_rate() {  # DIR TAG
  build/yoke translate --model "$1" --input "$out/src.txt" --beam "$beam" --threads "$threads" --workers 1 \
    >"$out/$2.txt" 2>"$out/$2.log"
  sed -n 's/.*(\([0-9.]*\) sentences\/s).*/\1/p' "$out/$2.log" | tail -n 1
}
echo "bench: ${#models[@]} models, $updates training updates and $(wc -l <"$out/src.txt") sentences at beam $beam each, $threads thread(s), $rounds rounds; $(nproc) cores; $(uptime)" >&2
for r in $(seq "$rounds"); do
  for m in "${models[@]}"; do
    name=${m%%=*} dir=${m#*=}
    echo "$name train $(train_rate "$name" "$name-$r")" >>"$out/rates"
    echo "$name decode $(decode_rate "$dir" "$name-$r")" >>"$out/rates"
  done
  echo "  round $r done; $(uptime)" >&2
done
/usr/bin/python3 - "$out/rates" "${models[@]}" <<'PY'
import statistics, sys
rates = {}
for line in open(sys.argv[1]):
    name, kind, value = line.split()
    rates.setdefault((name, kind), []).append(float(value))
names = [m.split("=", 1)[0] for m in sys.argv[2:]]
first = names[0]
print(f"| model | train tokens/s | ratio to {first} (per round) | decode sentences/s | ratio to {first} (per round) |")
print("| :--- | ---: | ---: | ---: | ---: |")
for name in names:
    cells = []
    for kind in ("train", "decode"):
        values, base = rates[(name, kind)], rates[(first, kind)]
        ratios = [a / b for a, b in zip(values, base)]
        cells.append(f"{statistics.median(values):.1f}")
        cells.append(f"**{statistics.median(ratios):.3f}** ({', '.join(f'{r:.3f}' for r in ratios)})")
    print(f"| {name} | " + " | ".join(cells) + " |")
PY
