#!/usr/bin/python3
"""Seed 004 Exercise 3 (weight tying as a constraint), from the committed files alone: no training.

(a) Delta* = L*_tied - L*_untied >= 0, the global minima of the training loss over the two feasible
    sets. That is exact (a minimum over a subset is at least the minimum over the whole set); this
    script does not test it. It measures what the converged runs show next to it:

    Data: docs/results/seed004-lm-decide-cpu (language models, tied and untied, seeds 1-2, dropout
    0.2, label smoothing 0; every run must end with an "end" record saying "early stopping").
    Per run, from model/metrics.jsonl (as scripts/seed004-generalisation-gap.py reads it):
      u*          the update of the "valid" record with the lowest "loss" (the early-stopping
                  metric; checked against the last "end" record's "best"); the checkpoint that
                  is analysed and tested is the one saved there;
      train_nll   the mean "nll" of the "train" records in (u* - 100, u*] (bits per token,
                  training batches, dropout on);
      valid_nll   the "valid" record's "nll" at u* (whole validation set, dropout off);
      min_train   the lowest "nll" of any "train" record of the run (secondary: runs of different
                  lengths reach it at different points, and a 50-update window's mean is noisy).
    Observed Delta = mean over tied runs - mean over untied runs, for train_nll (the quantity
    closest to Delta*'s) and valid_nll, each with Welch's t interval (unpaired, Welch-Satterthwaite
    df), two-sided, simultaneous over these 2 by Bonferroni (97.5%); min_train at the same level.
    Secondary: the same for decoder WT - vanilla in docs/results/seed003-decide-gpu (label
    smoothing 0.1 and dropout 0.1 in both; "nll" excludes the smoothing).
    Reading, fixed now: a measurement, no verdict. Delta* >= 0 is a statement about global minima
    of the training loss without dropout; a converged run is at a local, early-stopped point of a
    dropout-perturbed objective, and the validation loss is another function, so an observed
    Delta of either sign neither supports nor contradicts the inequality. The script reports the
    sign and whether the interval excludes 0.

(c) The "tying gap" rho-bar = mean over word ids j of cos(e_j, u_j) in the untied model, the seed's
    observable for "the untied optima are nearly tied", hence Delta* small. yoke analyze writes it
    as "tying_gap" in each untied run's analysis/analysis.json (src/analysis/properties.cpp: target
    embedding rows against output rows, from the first word id, on the checkpoint at u*). Read for
    the untied LMs of seed004-lm-decide-cpu and the vanilla runs of seed003-decide-gpu; reported
    per run, mean and sd, beside the observed Delta of (a).
    Reading, fixed now: a measurement, no verdict: the seed's (c) is a one-way heuristic about
    global optima (rho-bar near 1 => Delta* small) and says nothing where rho-bar is near 0; and two
    settings give no spread of rho-bar to relate to Delta.

What was known before this script was written: the runs' best validation losses (the "end"
records and docs/results/README.md print them as perplexities) and the tying_gap values of
these analysis.json files (seen while locating the key); not the training-loss windows or any Delta.

Usage: scripts/seed004-exercise3-tying-gap.py [RESULTS_DIR [OUT_DIR]]   (RESULTS_DIR: docs/results)
  Writes OUT_DIR/results.json and OUT_DIR/runs.tsv. --self-test checks the parts on synthetic input.
"""
import glob
import json
import os
import statistics
import sys

from welch import welch  # scripts/welch.py

ALPHA = 0.05
WINDOW = 100
M = 2  # train_nll and valid_nll
SETS = [  # (name, folder, untied variant, tied variant, role)
    ("LM", "seed004-lm-decide-cpu", "untied", "tied", "primary"),
    ("translation", "seed003-decide-gpu", "vanilla", "decoder", "secondary"),
]




def sign_reading(iv):
    if iv["lo"] > 0:
        return "above 0 (the sign Delta* >= 0 has)"
    if iv["hi"] < 0:
        return "below 0 (against the sign of Delta*)"
    return "holds 0"


def run_losses(records):
    valid = [r for r in records if r.get("type") == "valid"]
    train = [r for r in records if r.get("type") == "train"]
    ends = [r for r in records if r.get("type") == "end"]
    best = min(valid, key=lambda r: r["loss"])
    u = best["update"]
    window = [r for r in train if u - WINDOW < r["update"] <= u]
    if not window:
        raise ValueError(f"no train record in ({u - WINDOW}, {u}]")
    low = min(train, key=lambda r: r["nll"])
    end = ends[-1] if ends else {}
    return {"end_reason": end.get("reason"), "end_update": end.get("update"),
            "best_matches_end": end.get("best") == best["loss"], "best_update": u,
            "train_nll": sum(r["nll"] for r in window) / len(window), "valid_nll": best["nll"],
            "min_train": low["nll"], "min_train_update": low["update"]}


def tying_gap(run_dir):
    path = os.path.join(run_dir, "analysis", "analysis.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f).get("tying_gap")


def self_test():
    recs = [{"type": "train", "update": u, "nll": 3.0 - u / 1000 + (0.5 if u == 300 else 0)} for u in range(50, 1001, 50)]
    recs += [{"type": "valid", "update": u, "loss": abs(u - 600) / 1000 + 3, "nll": 3.5} for u in range(100, 1001, 100)]
    recs.append({"type": "end", "reason": "early stopping", "best": 3.0, "update": 1000})
    r = run_losses(recs)
    assert r["best_update"] == 600 and abs(r["train_nll"] - 2.425) < 1e-12 and r["best_matches_end"]
    assert r["min_train_update"] == 1000 and abs(r["min_train"] - 2.0) < 1e-12
    assert sign_reading(welch([1, 2, 3, 4, 5], [5, 6, 7, 8, 9], 0.95)).startswith("above")
    assert sign_reading(welch([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], 0.95)) == "holds 0"
    print("self-test passed")


def main(argv):
    if argv and argv[0] == "--self-test":
        self_test()
        return
    root = argv[0] if argv else "docs/results"
    out = argv[1] if len(argv) > 1 else None
    level = 1 - ALPHA / M
    rows, sets = [], []
    for name, folder, untied, tied, role in SETS:
        runs = {}
        for path in sorted(glob.glob(os.path.join(root, folder, "runs", "*", "seed*", "model", "metrics.jsonl"))):
            parts = path.split(os.sep)
            variant, seed = parts[-4], int(parts[-3][4:])
            if variant not in (untied, tied):
                continue
            with open(path) as f:
                r = run_losses([json.loads(l) for l in f])
            r["tying_gap"] = tying_gap(os.path.dirname(os.path.dirname(path)))
            runs[(variant, seed)] = r
            rows.append({"set": name, "folder": folder, "variant": variant, "seed": seed, **r})
        su = sorted(s for v, s in runs if v == untied)
        st = sorted(s for v, s in runs if v == tied)
        converged = all(r["end_reason"] == "early stopping" for r in runs.values())
        entry = {"name": name, "folder": folder, "role": role, "compare": f"{tied} - {untied}",
                 "seeds_untied": su, "seeds_tied": st, "all_converged": converged}
        for key in ("train_nll", "valid_nll", "min_train"):
            iv = welch([runs[(untied, s)][key] for s in su], [runs[(tied, s)][key] for s in st], level)
            iv["reading"] = sign_reading(iv)
            entry[key] = iv
        gaps = [runs[(untied, s)]["tying_gap"] for s in su]
        entry["rho_bar_untied"] = {"per_seed": gaps, "mean": statistics.mean(gaps),
                                   "sd": statistics.stdev(gaps) if len(gaps) > 1 else None}
        sets.append(entry)

    print("set\tvariant\tseed\tend\tu*\ttrain nll\tvalid nll\tmin train (update)\ttying_gap")
    for r in rows:
        tg = "-" if r["tying_gap"] is None else f"{r['tying_gap']:+.5f}"
        print(f"{r['set']}\t{r['variant']}\t{r['seed']}\t{r['end_reason']}\t{r['best_update']}\t"
              f"{r['train_nll']:.4f}\t{r['valid_nll']:.4f}\t{r['min_train']:.4f} ({r['min_train_update']})\t{tg}"
              + ("" if r["best_matches_end"] else "\t(best != end's best)"))
    for e in sets:
        for key in ("train_nll", "valid_nll", "min_train"):
            iv = e[key]
            print(f"{e['name']} {e['compare']} ({e['role']})\t{key}\t{iv['delta']:+.4f} [{iv['lo']:+.4f}, {iv['hi']:+.4f}] "
                  f"({100 * level:.1f}%, df {iv['df'] or float('nan'):.2f}, p {iv['p']:.4f}): {iv['reading']}")
        rb = e["rho_bar_untied"]
        print(f"{e['name']} rho-bar of the untied runs: {rb['mean']:+.5f} (sd {rb['sd'] or 0:.5f}; "
              + ", ".join(f"{g:+.5f}" for g in rb["per_seed"]) + ")")

    result = {"alpha": ALPHA, "m": M, "level": level, "window_updates": WINDOW, "runs": rows, "sets": sets,
              "verdict_a_exact": "property of constrained minimisation (not computed)",
              "verdict_a_empirical": "a measurement, no verdict", "verdict_c": "a measurement, no verdict"}
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
        keys = ["set", "folder", "variant", "seed", "end_reason", "end_update", "best_update", "train_nll",
                "valid_nll", "min_train", "min_train_update", "tying_gap"]
        with open(os.path.join(out, "runs.tsv"), "w") as f:
            f.write("\t".join(keys) + "\n")
            for r in rows:
                f.write("\t".join(f"{r[k]:.6f}" if isinstance(r[k], float) else str(r[k]) for k in keys) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
