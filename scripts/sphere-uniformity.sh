#!/usr/bin/env bash
# Seed 001 §2.2.1's premise on the models of an experiment: l2-normalised rows give an unbiased
# logit estimate "for w_i and w_j which are uniformly i.i.d on unit sphere". For every run,
# `yoke analyze` measures each distinct word matrix's unit rows (analysis/sphere_uniformity.h:
# mean resultant length, pair cosines, top PC share, participation ratio) beside what uniform
# rows would give; then one table, mean ± std over seeds per variant and matrix, in
# OUT_DIR/summary.md. The runs must still hold their checkpoints (an experiment folder, not an export).
# Usage: scripts/sphere-uniformity.sh EXPERIMENT_DIR OUT_DIR [CHECKPOINT [PREFIX]]
#   e.g. NOTE="Early training: 300 updates, not converged." scripts/sphere-uniformity.sh \
#          experiments/seed001-dynamicconv-cpu300 docs/results/seed001-sphere-cpu300 checkpoint_avg.ykp
# YOKE (default build/yoke) is the binary; MACHINE and NOTE go into the summary's header. Run it
# again with another experiment and the same OUT_DIR to add its variants to the table, named
# PREFIX + variant (a name already there is measured again).
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,13p "$0" >&2; exit 2; }
exp=$1 out=$2 ckpt=${3:-checkpoint_best.ykp} prefix=${4:-}
yoke=${YOKE:-build/yoke}
[ -d "$exp/runs" ] || { echo "sphere-uniformity: $exp/runs: no runs (an experiment folder written by yoke experiment)" >&2; exit 2; }
mkdir -p "$out"
for run in "$exp"/runs/*/seed*; do
  variant=$(basename "$(dirname "$run")") seed=$(basename "$run")
  [ -f "$run/model/$ckpt" ] || { echo "sphere-uniformity: $run/model/$ckpt missing (exported folders keep no checkpoints)" >&2; exit 2; }
  dest="$out/$prefix$variant/$seed"
  "$yoke" analyze --model "$run/model" --checkpoint "$ckpt" --out "$dest" --threads 1 > /dev/null
  # Only analysis.json is kept: the pictures are the experiment's own.
  find "$dest" -type f ! -name analysis.json -delete
  echo "sphere-uniformity: $variant $seed done" >&2
done
# The header records every invocation that wrote into OUT_DIR.
echo "- \`${YOKE:+YOKE=$YOKE }$0 $*\` in $PWD (checkpoint $ckpt), $(date -u +%F), commit $(git -C "$(dirname "$(readlink -f "$yoke")")" rev-parse --short HEAD 2>/dev/null || echo unknown)${NOTE:+: $NOTE}" >> "$out/commands.txt"
python3 - "$out" "${MACHINE:-2-core development machine}" <<'PY'
import json, math, os, sys
out, machine = sys.argv[1:3]
rows = {}
for variant in sorted(os.listdir(out)):
    vdir = os.path.join(out, variant)
    if not os.path.isdir(vdir): continue
    for seed in sorted(os.listdir(vdir)):
        a = json.load(open(os.path.join(vdir, seed, "analysis.json")))
        for matrix, s in a["sphere"].items():
            rows.setdefault((variant, matrix), []).append((a["estimator"], a["tie"], s))
def ms(v, fmt):
    v = [x for x in v if x is not None]
    if not v: return "n/a"
    m = sum(v) / len(v)
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return f"{m:{fmt}} ± {s:{fmt}}"
def uniform(v, fmt):  # the expectation depends on V and d only: one value per variant and matrix
    v = [x for x in v if x is not None]
    return "n/a" if not v else f"{sum(v) / len(v):{fmt}}"
lines = ["# Seed 001 §2.2.1: how far trained word rows are from uniform i.i.d. on the unit sphere", "",
         "Commands (command, date, commit, note):", ""]
lines += open(os.path.join(out, "commands.txt")).read().splitlines()
lines += ["", f"Machine: {machine}.", "",
          "Measured on the unit rows ŵ_i = w_i/‖w_i‖ of each distinct word matrix (special ids left out),",
          "mean ± std over seeds; in brackets what V rows drawn uniformly on the sphere in d dimensions give:",
          "R = ‖mean ŵ_i‖ (uniform ≈ 1/√V); the mean and std of ŵ_i·ŵ_j over 200000 random pairs i ≠ j",
          "(uniform 0 and 1/√d); the share of the centred unit rows' variance on the first principal component",
          "(uniform ≈ (1+√(d/V))²/d, the Marchenko–Pastur edge; 1/d as V → ∞) and the participation ratio",
          "(Σλ)²/Σλ² of their covariance eigenvalues (uniform ≈ d/(1+(d−1)/V); d as V → ∞).",
          "yoke initialises word matrices with i.i.d. Gaussian rows, whose unit rows are uniform on the sphere:",
          "the bracketed values are also what the matrices measured before training.", "",
          "| variant | estimator | tie | matrix | seeds | V | d | R (uniform) | cos mean (uniform 0) | cos std (uniform) | top PC share (uniform) | participation ratio (uniform) |",
          "| :--- | :--- | :--- | :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for (variant, matrix), rs in rows.items():
    s = [r[2] for r in rs]
    def get(*path):
        values = []
        for t in s:
            for p in path: t = t[p]
            values.append(t)
        return values
    lines.append(
        f"| {variant} | {rs[0][0]} | {rs[0][1]} | {matrix} | {len(rs)} | {s[0]['rows']} | {s[0]['dim']} | "
        f"{ms(get('mean_resultant_length', 'value'), '.3f')} ({uniform(get('mean_resultant_length', 'uniform_expected'), '.3f')}) | "
        f"{ms(get('pair_cosine', 'mean'), '.3f')} | "
        f"{ms(get('pair_cosine', 'std'), '.3f')} ({uniform(get('pair_cosine', 'uniform_expected_std'), '.3f')}) | "
        f"{ms(get('top_pc_share', 'value'), '.4f')} ({uniform(get('top_pc_share', 'uniform_expected'), '.4f')}) | "
        f"{ms(get('participation_ratio', 'value'), '.1f')} ({uniform(get('participation_ratio', 'uniform_expected'), '.1f')}) |")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
