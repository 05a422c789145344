#!/usr/bin/python3
"""The power analysis behind configs/grids/seed003-decide-registered-cpu.grid's seed plan.

Planning values come from seed003-decide-gpu's 15 converged runs (5 seeds of vanilla, decoder WT and
shared-private; flickr2016, 1000 sentences), read from the committed per-sentence BLEU statistics:
  - each run's test-set noise, split by resampling the sentences (the same draws for every run) into
    the part every run shares (the covariance between runs) and the part a run has alone (its
    variance less that covariance): only the second enters the spread of a system's seeds;
  - each system's training variance: its seeds' variance less that run-alone part;
  - each comparison's sentence part (what the shared test set adds to Var(mean B - mean A)), from the
    committed report.json.
On the registered test set of N sentences the two test-set parts shrink by 1000 / N. Then every
design in the list is simulated: seeds drawn from normals at those variances around the effects the
GPU runs measured, the registered unpaired (Welch) test with its sentence part, Bonferroni over the
three comparisons, and the registered readings: shared-private - vanilla and shared-private -
decoder reproduced (interval above 0), decoder - vanilla contradicted (interval above -0.05: no loss).

    python3 scripts/seed003-power.py [--folder docs/results/seed003-decide-gpu] [--sentences 4000]

Needs numpy and scipy (Debian: python3-numpy python3-scipy). Prints the planning values and, per
design, the power of each reading and an estimate of the CPU time: minutes a run at the rate of the
CPU re-run of shared-private seed 2 (6900 updates in about 104 minutes on one thread,
docs/results/README.md, "Three cells re-run"), for the updates each system's GPU runs took
(about 3400, 5000 and 5500: 56, 76 and 104 minutes with a margin for decoding).
"""
import argparse
import glob
import gzip
import json
import os

import numpy as np
from scipy import stats

SYSTEMS = ["vanilla", "decoder", "shared-private"]
MINUTES = {"vanilla": 56, "decoder": 76, "shared-private": 104}
# (B, A, the reading that decides, its threshold on the interval's lower end)
READINGS = [("shared-private", "vanilla", "reproduced", 0.0),
            ("decoder", "vanilla", "contradicted", -0.05),
            ("shared-private", "decoder", "reproduced", 0.0)]


def bleu(stats_rows):
    """sacreBLEU's corpus BLEU from rows of (hyp len, ref len, 4 x (matches, total))."""
    s = stats_rows.sum(axis=0)
    log_p = np.mean([np.log(s[2 + 2 * n] / s[3 + 2 * n]) for n in range(4)])
    return 100.0 * min(1.0, np.exp(1.0 - s[1] / s[0])) * np.exp(log_p)


def planning_values(folder, resamples, rng):
    runs = {v: [np.loadtxt(gzip.open(f), dtype=float)
                for f in sorted(glob.glob(os.path.join(folder, "runs", v, "seed*", "bleu.flickr2016.tsv.gz")))]
            for v in SYSTEMS}
    n = len(runs["vanilla"][0])
    draws = [rng.integers(0, n, n) for _ in range(resamples)]
    out = {}
    for v in SYSTEMS:
        boot = np.array([[bleu(r[i]) for i in draws] for r in runs[v]])
        cov = np.cov(boot)
        alone = np.diag(cov).mean() - cov[~np.eye(len(cov), dtype=bool)].mean()
        scores = np.array([bleu(r) for r in runs[v]])
        out[v] = {"mean": scores.mean(), "seed_var": scores.var(ddof=1), "alone": alone,
                  "train": scores.var(ddof=1) - alone}
    report = json.load(open(os.path.join(folder, "report.json")))
    sentence = {}
    for e in report["variants"]:
        t = e["tests"]["flickr2016"].get("test")
        if t: sentence[(e["variant"], report["baseline"])] = t["var_sentence"]
    return out, sentence, n


def power(k, values, sentence, scale, rng, trials):
    hits = {r[:2]: 0 for r in READINGS}
    level = 0.05 / len(READINGS)
    for _ in range(trials):
        x = {v: rng.normal(values[v]["mean"], np.sqrt(values[v]["train"] + values[v]["alone"] * scale), k[v])
             for v in SYSTEMS}
        for b, a, _, threshold in READINGS:
            va, vb = x[a].var(ddof=1) / k[a], x[b].var(ddof=1) / k[b]
            df = (va + vb) ** 2 / (va ** 2 / (k[a] - 1) + vb ** 2 / (k[b] - 1))
            # the sentence part of B - A; shared-private - decoder was not in the GPU report: the larger of the two
            part = sentence.get((b, a), max(sentence.values())) * scale
            low = x[b].mean() - x[a].mean() - stats.t.ppf(1 - level / 2, df) * np.sqrt(va + vb + part)
            hits[(b, a)] += low > threshold
    return {key: hits[key] / trials for key in hits}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--folder", default="docs/results/seed003-decide-gpu")
    p.add_argument("--sentences", type=int, default=4000)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--trials", type=int, default=4000)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    values, sentence, n = planning_values(args.folder, args.resamples, rng)
    scale = n / args.sentences
    print(f"planning values from {args.folder} ({n} sentences; BLEU^2):")
    for v in SYSTEMS:
        d = values[v]
        print(f"  {v:15s} mean {d['mean']:.2f}  seeds' variance {d['seed_var']:.3f} = training {d['train']:.3f}"
              f" + a run's test-set noise not shared with other runs {d['alone']:.3f}")
    for (b, a), s in sentence.items():
        print(f"  sentence part of {b} - {a}: {s:.4f}")
    print(f"on {args.sentences} sentences the test-set parts are x{scale:.2f}; power of the registered readings:")
    designs = [(5, 5, 5), (6, 4, 6), (6, 5, 6), (6, 6, 6), (7, 5, 6), (8, 6, 6)]
    for design in designs:
        k = dict(zip(SYSTEMS, design))
        pw = power(k, values, sentence, scale, rng, args.trials)
        hours = sum(k[v] * MINUTES[v] for v in SYSTEMS) / 60
        readings = ", ".join(f"{b} - {a} {what} {pw[(b, a)]:.2f}" for b, a, what, _ in READINGS)
        print(f"  seeds {design}: {readings}; {hours:.1f} core-hours ({hours / 2:.1f} h on 2 cores)")


if __name__ == "__main__":
    main()
