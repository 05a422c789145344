#!/usr/bin/env bash
# Seed 001 §2.2's mechanism on the models of an experiment: for every run, `yoke analyze --hyp
# --ref` correlates each output row's norm with how much more often the model predicts the word
# than the references use it (analysis/norm_prediction.h); then one table, mean ± std over seeds
# per variant. The runs must still hold their checkpoints (an experiment folder, not an export).
# Usage: scripts/norm-prediction.sh EXPERIMENT_DIR TEST_NAME REFERENCE OUT_DIR [CHECKPOINT]
#   e.g. scripts/norm-prediction.sh experiments/seed001-dynamicconv-cpu300 flickr2016 \
#          data/multi30k-ende/test.flickr2016.tgt.txt docs/results/seed001-norm-prediction-cpu300 checkpoint_avg.ykp
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,8p "$0" >&2; exit 2; }
exp=$1 test=$2 ref=$3 out=$4 ckpt=${5:-checkpoint_best.ykp}
yoke=${YOKE:-build/yoke}
[ -d "$exp/runs" ] || { echo "norm-prediction: $exp/runs: no runs (an experiment folder written by yoke experiment)" >&2; exit 2; }
mkdir -p "$out"
for run in "$exp"/runs/*/seed*; do
  variant=$(basename "$(dirname "$run")") seed=$(basename "$run")
  [ -f "$run/model/$ckpt" ] || { echo "norm-prediction: $run/model/$ckpt missing (exported folders keep no checkpoints)" >&2; exit 2; }
  "$yoke" analyze --model "$run/model" --checkpoint "$ckpt" --hyp "$run/hyp.$test.txt" --ref "$ref" \
    --out "$out/$variant/$seed" --threads 1 > /dev/null
  # Only analysis.json is kept: the pictures are the experiment's own.
  find "$out/$variant/$seed" -type f ! -name analysis.json -delete
  echo "norm-prediction: $variant $seed done" >&2
done
python3 - "$out" <<'PY'
import json, math, os, sys
out = sys.argv[1]
rows = {}
for variant in sorted(os.listdir(out)):
    vdir = os.path.join(out, variant)
    if not os.path.isdir(vdir): continue
    for seed in sorted(os.listdir(vdir)):
        p = json.load(open(os.path.join(vdir, seed, "analysis.json")))
        rows.setdefault(variant, []).append((p["estimator"], p["norm_vs_prediction"]))
def ms(v):
    v = [x for x in v if x is not None]
    if not v: return "n/a"
    m = sum(v) / len(v)
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return f"{m:+.3f} ± {s:.3f}"
lines = ["| variant | estimator | seeds | words | ρ(‖u‖, over-prediction) | ρ(‖u‖, reference frequency) | per seed (over-prediction) |",
         "| :--- | :--- | ---: | ---: | ---: | ---: | :--- |"]
for variant, rs in rows.items():
    over = [r[1]["spearman_overprediction"] for r in rs]
    freq = [r[1]["spearman_reference_frequency"] for r in rs]
    words = round(sum(r[1]["words"] for r in rs) / len(rs))
    per = ", ".join("n/a" if x is None else f"{x:+.3f}" for x in over)
    lines.append(f"| {variant} | {rs[0][0]} | {len(rs)} | {words} | {ms(over)} | {ms(freq)} | {per} |")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
