#!/usr/bin/env bash
# Data-parallel scaling on this machine's CPU: the reference model (configs/multi30k-ende.conf:
# d 256, 3+3 layers, 2048-token batches) trained for the same updates on the same global batches
#   - by one process with update_freq 2 and all cores,
#   - by 2 ranks (`yoke train --nproc 2`, Gloo over loopback) with update_freq 1, the cores split,
#   - by one process with update_freq 2 on one core (what one rank's share of the machine does).
# Rounds alternate the setups so that drift in the machine's speed hits all of them. From rank
# 0's metrics.jsonl: tokens/s, and the time rank 0 waited for gradient sums the backward pass
# did not hide, per update and as a share of the wall time.
#
#   bench/distributed.sh [UPDATES=60] [ROUNDS=2]      (Multi30k from ../shared/data, or DATA=dir)
set -euo pipefail
cd "$(dirname "$0")/.."
updates=${1:-60} rounds=${2:-2}
[ -x build/yoke ] || bash scripts/build.sh >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
data=${DATA:-}
if [ -z "$data" ]; then
  S=../shared/data/multi30k
  [ -f $S/train.en.gz ] || { echo "bench/distributed.sh: no $S/train.en.gz; set DATA to a prepared data directory" >&2; exit 2; }
  data=$out/data
  build/yoke prepare --train-src $S/train.en.gz --train-tgt $S/train.de.gz --valid-src $S/val.en.gz \
    --valid-tgt $S/val.de.gz --joint --vocab-size 8000 --out "$data" >/dev/null 2>&1
fi
common=(--config configs/multi30k-ende.conf --data "$data" --max_updates "$updates" --max_minutes 0
        --valid_interval 0 --valid_bleu false --save_interval 0 --log_interval 10 --warmup 400)
run() {  # name, extra args...
  local name=$1; shift
  local dir=$out/runs/$name.$r
  echo "  round $r: $name: yoke train ${*}" >&2
  build/yoke train "${common[@]}" --save_dir "$dir" "$@" 2> "$out/$name.$r.log" || { cat "$out/$name.$r.log" >&2; exit 1; }
  grep '"type":"end"' "$dir/metrics.jsonl" | tail -n 1 | sed "s/^{/{\"setup\":\"$name\",/" >> "$out/results.jsonl"
}
echo "bench: $(nproc) cores, $updates updates of 2 x 2048-token batches, $rounds rounds" >&2
for r in $(seq "$rounds"); do
  run "1 process, $(nproc) threads" --update_freq 2 --threads "$(nproc)"
  run "2 ranks, $(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 )) thread(s) each" --update_freq 1 --nproc 2
  run "1 process, 1 thread" --update_freq 2 --threads 1
done
/usr/bin/python3 - "$out/results.jsonl" <<'EOF'
import json, sys, statistics
rows = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    rows.setdefault(j["setup"], []).append(j)
base = statistics.median(r["tokens_per_s"] for r in next(iter(rows.values())))
print(f"| setup | tokens/s (median of {len(next(iter(rows.values())))}) | vs 1 process | waiting for other ranks per update | share of wall time |")
print("| :--- | ---: | ---: | ---: | ---: |")
summary = {}
for name, rs in rows.items():
    tps = statistics.median(r["tokens_per_s"] for r in rs)
    wait = [r.get("comm_wait_s") for r in rs]
    if all(w is not None for w in wait):
        per = statistics.median(w / r["update"] for w, r in zip(wait, rs)) * 1000
        share = statistics.median(w / r["elapsed_s"] for w, r in zip(wait, rs)) * 100
        comm = f"{per:.1f} ms | {share:.1f}%"
    else:
        per = share = None
        comm = "— | —"
    print(f"| {name} | {tps:.0f} | {tps / base:.2f}x | {comm} |")
    summary[name] = {"tokens_per_s": tps, "ratio": tps / base, "wait_ms_per_update": per, "wait_share_pct": share}
print(json.dumps(summary))
EOF
