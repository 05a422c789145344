#!/usr/bin/env python3
"""Compares the validation curves of an experiment's runs, finished or not.

A run stopped before early stopping fired has no test scores, but its model/metrics.jsonl holds
every validation. This script reads those of every run under the given folders (any
runs/VARIANT/seedN/model/metrics.jsonl below them, so both `yoke experiment` folders and
scripts/run-grid-parallel.sh's parts/ work) and, for one metric,
  - per run: its best value, the update of the best, its last update, and whether it converged
    (early stopping fired, or it ended at its budget with a flat loss by the reports' slope rule,
    src/experiment/convergence.h) or was cut off;
  - per variant pair: the mean difference across seeds, at each run's best and at one update that
    every run reached, with an exact two-sided permutation test over the seeds (unpaired: a seed
    gives each variant a different initialisation, so seeds pair nothing).
A cut-off run's best is an upper bound on its converged validation loss (a lower bound for BLEU):
a difference that favours the cut-off variant can only grow, one that favours the other decides
nothing. The script says which.

  scripts/compare-curves.py DIR [DIR ...] [--metric nll|loss|bleu] [--at UPDATE] [--baseline V]
Standard library only.
"""
import argparse
import itertools
import json
import os
import statistics
import sys


def find_runs(roots):
    runs = {}  # (variant, seed) -> path of metrics.jsonl
    for root in roots:
        for dirpath, _, files in os.walk(root):
            if "metrics.jsonl" not in files or os.path.basename(dirpath) != "model":
                continue
            seed_dir = os.path.dirname(dirpath)
            variant_dir = os.path.dirname(seed_dir)
            if os.path.basename(os.path.dirname(variant_dir)) != "runs":
                continue
            seed = os.path.basename(seed_dir)
            if not seed.startswith("seed") or not seed[4:].isdigit():
                continue
            runs[(os.path.basename(variant_dir), int(seed[4:]))] = os.path.join(dirpath, "metrics.jsonl")
    return runs


# The reports' slope rule (src/experiment/convergence.h): over the last WINDOW validations the
# loss falls, with 95% confidence, by less than MAX_DECLINE of itself. T_95 is the one-sided 95%
# quantile of t with WINDOW − 2 = 3 degrees of freedom.
WINDOW, MAX_DECLINE, T_95 = 5, 0.005, 2.353363


def loss_plateau(points):
    """(converged, why) by the slope rule on [(update, loss), ...]."""
    if len(points) < WINDOW:
        return False, f"{len(points)} validations, fewer than {WINDOW}"
    xs, ys = [float(u) for u, _ in points[-WINDOW:]], [float(v) for _, v in points[-WINDOW:]]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0 or my <= 0:
        return False, "the last validations share one update or have no positive loss"
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    rss = sum((y - (my + slope * (x - mx))) ** 2 for x, y in zip(xs, ys))
    se = (rss / (WINDOW - 2) / sxx) ** 0.5
    span = xs[-1] - xs[0]
    decline, bound = -slope * span / my, (-slope + T_95 * se) * span / my
    return bound <= MAX_DECLINE, f"slope rule: loss {'falls' if decline >= 0 else 'rises'} {100 * abs(decline):.2f}%, bound {100 * bound:.2f}%"


def read_run(path, metric):
    """The (update, value) validations, why training last ended ('' while it runs), and the
    (update, loss) validations the slope rule reads."""
    valid, reason, losses = [], "", []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON ({e})")
            if record.get("type") == "valid" and metric in record:
                valid.append((record["update"], record[metric]))
            if record.get("type") == "valid" and isinstance(record.get("loss"), (int, float)):
                losses.append((record["update"], record["loss"]))
            if record.get("type") == "end":  # a resumed run appends; the last one counts
                reason = record.get("reason", "")
    if not valid:
        sys.exit(f"{path}: no validation with '{metric}'")
    return valid, reason, losses


def convergence(reason, losses):
    """(converged, state): early stopping, or a run that ended at its budget (max_updates,
    max_minutes) whose loss is flat by the slope rule, as the reports decide."""
    if reason == "early stopping":
        return True, "converged (early stopping)"
    if reason in ("max_updates", "max_minutes"):
        flat, why = loss_plateau(losses)
        return flat, f"{'converged' if flat else 'cut off'} ({reason}; {why})"
    return False, f"cut off ({reason or 'running'})"


def permutation_p(a, b):
    """Exact two-sided p of the difference in means, over every split of the pooled values."""
    pooled, n = a + b, len(a)
    observed = abs(statistics.mean(a) - statistics.mean(b))
    hits = total = 0
    for chosen in itertools.combinations(range(len(pooled)), n):
        x = [pooled[i] for i in chosen]
        rest = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        total += 1
        hits += abs(statistics.mean(x) - statistics.mean(rest)) >= observed - 1e-12
    return hits / total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--metric", default="nll", choices=["nll", "loss", "bleu", "ppl"])
    ap.add_argument("--at", type=int, default=0, help="the common update (default: the largest every run reached)")
    ap.add_argument("--baseline", default="", help="compare every variant with this one only")
    args = ap.parse_args()
    lower_is_better = args.metric != "bleu"
    better = min if lower_is_better else max

    runs = find_runs(args.dirs)
    if not runs:
        sys.exit("compare-curves: no runs/VARIANT/seedN/model/metrics.jsonl under " + " ".join(args.dirs))
    read = {key: read_run(path, args.metric) for key, path in runs.items()}
    curves = {key: r[0] for key, r in read.items()}
    states = {key: convergence(r[1], r[2]) for key, r in read.items()}
    finished = {key: c for key, (c, _) in states.items()}  # converged
    at = args.at or min(c[-1][0] for c in curves.values())

    def value_at(curve):  # None for a run that ended before `at`
        if curve[-1][0] < at:
            return None
        seen = [v for u, v in curve if u <= at]
        return seen[-1] if seen else None

    variants = sorted({v for v, _ in runs}, key=lambda v: (v != args.baseline, v))
    print(f"metric: validation {args.metric} ({'lower' if lower_is_better else 'higher'} is better); common update {at}")
    print(f"{'variant':16} {'seed':>4} {'best':>8} {'@update':>8} {'last':>6}  {'at ' + str(at):>8}  state")
    table = {}
    for v in variants:
        for s in sorted(s for w, s in runs if w == v):
            curve = curves[(v, s)]
            best_update, best_value = better(curve, key=lambda p: p[1])
            now = value_at(curve)
            table[(v, s)] = (best_value, now)
            state = states[(v, s)][1]
            print(f"{v:16} {s:>4} {best_value:8.4f} {best_update:>8} {curve[-1][0]:>6}  "
                  f"{'-' if now is None else format(now, '8.4f'):>8}  {state}")
    print()
    pairs = [(args.baseline, v) for v in variants if v != args.baseline] if args.baseline else \
        list(itertools.combinations(variants, 2))
    for a, b in pairs:
        for label, index in (("best", 0), (f"at {at}", 1)):
            xa = [table[k][index] for k in table if k[0] == a and table[k][index] is not None]
            xb = [table[k][index] for k in table if k[0] == b and table[k][index] is not None]
            if len(xa) < 2 or len(xb) < 2:
                continue
            d = statistics.mean(xb) - statistics.mean(xa)
            p = permutation_p(xa, xb)
            line = f"{b} - {a}, {label}: {d:+.4f} (n {len(xb)} vs {len(xa)}), exact permutation p = {p:.4f}"
            if label == "best":
                cut_a = any(not finished[k] for k in table if k[0] == a)
                cut_b = any(not finished[k] for k in table if k[0] == b)
                favours_b = (d < 0) == lower_is_better
                if (cut_b and not favours_b) or (cut_a and favours_b):
                    line += "; cut-off runs could close this gap: decides nothing"
                elif cut_a or cut_b:
                    line += "; cut-off runs can only widen this gap"
            print(line)


if __name__ == "__main__":
    main()
