#!/usr/bin/env python3
"""Seed 004 §4.5 says the output path carries "approximately 70% of the total signal during early
training" (after Iyer et al. 2025) without saying of what. This states it precisely from the
per-update records a run with log_grad_paths = true writes (metrics.jsonl, type grad_paths:
input_sq = ‖g_A‖², output_sq = ‖g_B‖² summed over the word matrices, cosine_ab = cos(g_A, g_B)):

  squared   ‖g_B‖² / (‖g_A‖² + ‖g_B‖²)   per update, then averaged (yoke's share_output)
  norms     ‖g_B‖ / (‖g_A‖ + ‖g_B‖)       per update, then averaged
  pooled    Σ‖g_B‖² / Σ(‖g_A‖² + ‖g_B‖²)  over the updates of the window
  of sum    ‖g_B‖² / ‖g_A + g_B‖²          the output path against the gradient the matrix gets
                                           (tied matrices only: needs cos(g_A, g_B))

over windows of updates, mean ± std over the seeds of each variant.
Usage: scripts/gradient-share-forms.py EXPERIMENT_DIR [first-window-sizes ...]   (default 1 10 20)
"""
import glob, json, math, os, statistics, sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
exp = sys.argv[1]
firsts = [int(a) for a in sys.argv[2:]] or [1, 10, 20]
runs = sorted(glob.glob(os.path.join(exp, "runs", "*", "seed*", "model", "metrics.jsonl")))
if not runs:
    sys.exit(f"{exp}: no runs/*/seed*/model/metrics.jsonl")

def forms(records):
    a = [r["input_sq"] for r in records]
    b = [r["output_sq"] for r in records]
    out = {
        "squared": statistics.mean(y / (x + y) for x, y in zip(a, b)),
        "norms": statistics.mean(math.sqrt(y) / (math.sqrt(x) + math.sqrt(y)) for x, y in zip(a, b)),
        "pooled": sum(b) / (sum(a) + sum(b)),
    }
    cos = [r.get("cosine_ab") for r in records]
    if all(c is not None and not (isinstance(c, float) and math.isnan(c)) for c in cos):
        out["of sum"] = statistics.mean(
            y / (x + y + 2 * c * math.sqrt(x * y)) for x, y, c in zip(a, b, cos))
    return out

table = {}  # (variant, window) -> form -> [per seed]
for path in runs:
    variant = path.split(os.sep)[-4]
    records = [r for r in map(json.loads, open(path)) if r.get("type") == "grad_paths"]
    records.sort(key=lambda r: r["update"])
    if not records:
        continue
    n = len(records)
    windows = [(f"first {k}", records[:k]) for k in firsts] + [
        (f"last {firsts[-1]}", records[-firsts[-1]:]), (f"all {n}", records)]
    for name, window in windows:
        for form, value in forms(window).items():
            table.setdefault((variant, name), {}).setdefault(form, []).append(value)

names = ["squared", "norms", "pooled", "of sum"]
print("| variant | updates | " + " | ".join(names) + " |")
print("| :--- | :--- | " + " | ".join("---:" for _ in names) + " |")
for (variant, window), values in table.items():
    cells = []
    for form in names:
        v = values.get(form)
        if not v:
            cells.append("—")
        else:
            sd = statistics.stdev(v) if len(v) > 1 else 0.0
            cells.append(f"{100 * statistics.mean(v):.1f}% ± {100 * sd:.1f}")
    print(f"| {variant} | {window} | " + " | ".join(cells) + " |")
