#!/usr/bin/env bash
# Seed 001's Figure 2 over training: the norms of the stored embedding rows at every checkpoint a
# run kept (`yoke analyze --checkpoint checkpoint_uN.ykp`), per variant, into one table and one
# picture of the coefficient of variation (std / mean of the row norms) against the update.
# The runs must keep their numbered checkpoints (save_interval, keep_last: as
# configs/grids/seed001-norms-training-cpu.grid sets them) and an untrained model is measured
# too: `yoke train` of the run's config and seed for one update at lr = 1e-12 writes the initial
# weights (Adam moves each by at most lr · (warm-up share) ≈ 1e-14, far below the 3 decimals shown).
# Usage: scripts/norms-over-training.sh EXPERIMENT_DIR OUT_DIR   (YOKE names the binary; default build/yoke)
set -euo pipefail
[ $# -eq 2 ] || { sed -n 2,9p "$0" >&2; exit 2; }
exp=$1 out=$2
yoke=${YOKE:-build/yoke}
[ -d "$exp/runs" ] || { echo "norms-over-training: $exp/runs: no runs (an experiment folder written by yoke experiment)" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for run in "$exp"/runs/*/seed*; do
  variant=$(basename "$(dirname "$run")") seed=$(basename "$run")
  dest="$out/$variant/$seed"
  mkdir -p "$dest"
  # Update 0: the same config and seed, one update at lr = 1e-12 (the weights as initialised;
  # max_updates = 0 means "no limit" and lr must be positive).
  /usr/bin/python3 "$(dirname "$0")/run-config.py" "$run/model/metrics.jsonl" >"$tmp/init.conf"
  rm -rf "$tmp/init"
  "$yoke" train --config "$tmp/init.conf" --set save_dir="$tmp/init" --set max_updates=1 --set lr=1e-12 \
    --set valid_interval=1000000 --set threads=1 >/dev/null 2>&1
  "$yoke" analyze --model "$tmp/init" --checkpoint checkpoint_last.ykp --out "$tmp/a" --threads 1 >/dev/null
  cp "$tmp/a/analysis.json" "$dest/u0.json"
  for ckpt in "$run"/model/checkpoint_u*.ykp; do
    name=$(basename "$ckpt" .ykp)
    "$yoke" analyze --model "$run/model" --checkpoint "$name.ykp" --out "$tmp/a" --threads 1 >/dev/null
    cp "$tmp/a/analysis.json" "$dest/${name#checkpoint_}.json"
  done
  echo "norms-over-training: $variant $seed done" >&2
done
/usr/bin/python3 - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
series = {}  # variant -> [(update, mean, std, min, max)] (first seed; matrices: the one shared or the output)
for variant in sorted(os.listdir(out)):
    vdir = os.path.join(out, variant)
    if not os.path.isdir(vdir): continue
    for seed in sorted(os.listdir(vdir)):
        points = []
        for f in os.listdir(os.path.join(vdir, seed)):
            m = re.fullmatch(r"u(\d+)\.json", f)
            if not m: continue
            a = json.load(open(os.path.join(vdir, seed, f)))
            name, n = next(iter(a["norms"].items())) if len(a["norms"]) == 1 else \
                next((k, v) for k, v in a["norms"].items() if "output" in k)
            points.append((int(m.group(1)), n["mean"], n["std"], n["min"], n["max"], a["estimator"]))
        series[(variant, seed)] = sorted(points)
lines = ["| variant | estimator | seed | update | mean ‖w‖ | std | std / mean | min | max |",
         "| :--- | :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: |"]
for (variant, seed), pts in series.items():
    for u, mean, std, lo, hi, est in pts:
        lines.append(f"| {variant} | {est} | {seed} | {u} | {mean:.3f} | {std:.3f} | {std / mean:.3f} | {lo:.3f} | {hi:.3f} |")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
# One picture: std / mean of the row norms against the update, a line per variant and seed.
W, H, L, B = 640, 360, 60, 40
umax = max(p[0] for pts in series.values() for p in pts) or 1
cmax = max(p[2] / p[1] for pts in series.values() for p in pts) * 1.1 or 1
colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<line x1="{L}" y1="{H - B}" x2="{W - 20}" y2="{H - B}" stroke="black"/>',
       f'<line x1="{L}" y1="20" x2="{L}" y2="{H - B}" stroke="black"/>',
       f'<text x="{(W + L) / 2}" y="{H - 8}" text-anchor="middle">update</text>',
       f'<text x="14" y="{H / 2}" transform="rotate(-90 14 {H / 2})" text-anchor="middle">std / mean of the row norms</text>']
x = lambda u: L + (W - 20 - L) * u / umax
y = lambda c: H - B - (H - B - 20) * c / cmax
for i in range(5):
    c = cmax * i / 4
    svg.append(f'<text x="{L - 6}" y="{y(c) + 4}" text-anchor="end">{c:.2f}</text>')
for u in sorted({p[0] for pts in series.values() for p in pts})[::2]:
    svg.append(f'<text x="{x(u)}" y="{H - B + 16}" text-anchor="middle">{u}</text>')
for i, ((variant, seed), pts) in enumerate(series.items()):
    colour = colours[i % len(colours)]
    path = " ".join(f"{x(p[0]):.1f},{y(p[2] / p[1]):.1f}" for p in pts)
    svg.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
    svg.append(f'<text x="{L + 10}" y="{30 + 16 * i}" fill="{colour}">{variant} ({pts[0][5]}) {seed}</text>')
svg.append("</svg>")
open(os.path.join(out, "norms_over_training.svg"), "w").write("\n".join(svg) + "\n")
PY
