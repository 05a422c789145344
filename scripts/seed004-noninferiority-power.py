#!/usr/bin/python3
"""The power analysis behind seed004-lm-noninferiority-cpu.grid's seed plan: tied against untied
language models as a non-inferiority test, "tied is not worse than untied by MARGIN perplexity".

Planning values from seed004-lm-decide-cpu's four converged runs (2 seeds a variant, flickr2016-en,
1000 lines; the committed report.json): each variant's seed-to-seed variance of perplexity, and the
sentence part of Var(mean tied - mean untied) (the covariance between different runs over re-drawn
test sets), which shrinks by 1000 / N on a test set of N lines. Each design is simulated: k seeds a
variant drawn from normals at those variances, tied - untied = DELTA, the registered unpaired
(Welch) test with its sentence part, one comparison at 5%; reproduced when the 95% interval's upper
end is below MARGIN.

    python3 scripts/seed004-noninferiority-power.py [--folder docs/results/seed004-lm-decide-cpu] [--lines 5000] [--margin 1.0]

Needs numpy and scipy (Debian: python3-numpy python3-scipy). Two seeds a variant make the variances
rough: the power printed is a plan, not a promise.
"""
import argparse
import json
import os

import numpy as np
from scipy import stats


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--folder", default="docs/results/seed004-lm-decide-cpu")
    p.add_argument("--lines", type=int, default=5000)
    p.add_argument("--margin", type=float, default=1.0)
    p.add_argument("--trials", type=int, default=20000)
    args = p.parse_args()
    report = json.load(open(os.path.join(args.folder, "report.json")))
    values, sentence, lines = {}, None, 1000
    for e in report["variants"]:
        t = next(iter(e["tests"].values()))
        values[e["variant"]] = np.array(t["ppl"]["values"])
        if t.get("test"):
            sentence = t["test"]["var_sentence"]
    var = {v: x.var(ddof=1) for v, x in values.items()}
    scale = lines / args.lines
    print(f"planning values from {args.folder}: seed variance untied {var['untied']:.3f}, tied {var['tied']:.3f} PPL^2; "
          f"sentence part {sentence:.4f} PPL^2 on {lines} lines, x{scale:.2f} on {args.lines}")
    rng = np.random.default_rng(1)
    print(f"power of 'tied not worse than untied by {args.margin} PPL' (95% upper end below the margin):")
    for k in (3, 4, 5, 6, 8):
        row = []
        for delta in (-0.27, 0.0, 0.28, 0.5):
            hits = 0
            for _ in range(args.trials):
                u = rng.normal(0.0, np.sqrt(var["untied"]), k)
                t = rng.normal(delta, np.sqrt(var["tied"]), k)
                va, vb = u.var(ddof=1) / k, t.var(ddof=1) / k
                df = (va + vb) ** 2 / (va ** 2 / (k - 1) + vb ** 2 / (k - 1))
                upper = t.mean() - u.mean() + stats.t.ppf(0.975, df) * np.sqrt(va + vb + sentence * scale)
                hits += upper < args.margin
            row.append(f"Δ {delta:+.2f}: {hits / args.trials:.2f}")
        print(f"  {k} seeds a variant: " + ", ".join(row))


if __name__ == "__main__":
    main()
