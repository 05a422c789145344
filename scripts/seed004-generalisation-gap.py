#!/usr/bin/python3
"""Seed 004 §3.2 (1): tying regularises: "reduced expressivity prevents the model from memorizing
idiosyncratic input/output pairs". Read as: a tied model's generalisation gap is smaller than the
untied one's. Tested from the committed training logs alone (model/metrics.jsonl of each run): no
training, no decoding.

Measure, fixed before it was computed on the real data:

  Records.  metrics.jsonl holds "train" records every log_interval (50) updates, whose "nll" is
  the token-weighted mean NLL (bits per token, label smoothing excluded) over the updates since
  the previous "train" record, measured on the training batches in training mode (dropout on);
  "valid" records every valid_interval (100) updates with "loss" (the early-stopping metric,
  label smoothing included where the run uses it) and "nll" (without it) on the whole validation
  set, in evaluation mode; and "end" records with "reason" and "best".

  Best validation.  u* = the update of the "valid" record with the lowest "loss" (the run's own
  early-stopping metric; the script checks it equals the last "end" record's "best").

  Primary measure, per run: gap = valid nll at u* - the mean of the "nll" of the "train" records
  whose update lies in (u* - 100, u*] (the two 50-update windows of the 100 updates before that
  validation; a window cut short by a resume counts as it was logged). In bits per token.

  Secondary (reported, not deciding): the same gap with "loss" in place of "nll" (for the
  translation runs that includes label smoothing 0.1 on both sides; for the language models,
  label smoothing 0, it equals the primary); the validation nll and the training nll separately;
  and shared-private - vanilla on the translation folder.

  Data.  docs/results/seed004-lm-decide-cpu (language models, variants untied and tied, seeds 1-2;
  dropout 0.2, label smoothing 0 in both) and docs/results/seed003-decide-gpu (translation, vanilla
  and decoder WT, seeds 1-5 each; dropout 0.1, label smoothing 0.1 in both).

  Comparisons (m = 2), the claim being Delta < 0 in each:
    LM:          tied - untied      (2 runs a side)
    translation: decoder - vanilla  (5 runs a side)
  Delta = mean gap over B's runs - mean gap over A's runs.

  Decision rule: Welch's t interval (unpaired; Welch-Satterthwaite df), two-sided, simultaneous
  over the 2 comparisons by Bonferroni: level 1 - 0.05/2 = 97.5%. reproduced: wholly below 0;
  contradicted: wholly above 0 (no margin: the seed gives no number); inconclusive otherwise. Every
  run must have converged: the last "end" record must say "early stopping".

  The confound, the same in both arms of each comparison: the training nll is measured with
  dropout on (and, in the translation runs, while training on a label-smoothed objective), so the
  gap is not the gap of one model on two data sets under one mode; a model that dropout hurts more
  shows a smaller (even negative) gap without generalising better.

What was known before this script was written: the runs' best validation losses (the "end"
records; docs/results/README.md says decoder WT's validation NLL is 0.143 below vanilla's and
prints the LMs' test perplexities); no training-loss window and no gap had been computed.

Usage: scripts/seed004-generalisation-gap.py [RESULTS_DIR [OUT_DIR]]
  RESULTS_DIR defaults to docs/results; writes OUT_DIR/results.json and OUT_DIR/runs.tsv.
  --self-test checks the record selection and the statistics on synthetic records and exits.
"""
import glob
import json
import os
import sys

from welch import welch  # scripts/welch.py

ALPHA = 0.05
WINDOW = 100  # updates before u* whose train records are averaged
COMPARISONS = [  # (name, folder, A, B); Delta = B - A, claimed < 0
    ("LM", "seed004-lm-decide-cpu", "untied", "tied"),
    ("translation", "seed003-decide-gpu", "vanilla", "decoder"),
]
SECONDARY = [("translation", "seed003-decide-gpu", "vanilla", "shared-private")]




def verdict_below(iv):
    if iv["hi"] < 0:
        return "reproduced"
    if iv["lo"] > 0:
        return "contradicted"
    return "inconclusive"


def run_gap(records):
    valid = [r for r in records if r.get("type") == "valid"]
    train = [r for r in records if r.get("type") == "train"]
    ends = [r for r in records if r.get("type") == "end"]
    best = min(valid, key=lambda r: r["loss"])
    u = best["update"]
    window = [r for r in train if u - WINDOW < r["update"] <= u]
    if not window:
        raise ValueError(f"no train record in ({u - WINDOW}, {u}]")
    tr_nll = sum(r["nll"] for r in window) / len(window)
    tr_loss = sum(r["loss"] for r in window) / len(window)
    end = ends[-1] if ends else {}
    return {
        "end_reason": end.get("reason"), "end_update": end.get("update"),
        "best_matches_end": end.get("best") == best["loss"],
        "best_update": u, "train_updates": [r["update"] for r in window],
        "valid_nll": best["nll"], "valid_loss": best["loss"],
        "train_nll": tr_nll, "train_loss": tr_loss,
        "gap_nll": best["nll"] - tr_nll, "gap_loss": best["loss"] - tr_loss,
    }


def read_runs(folder):
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "runs", "*", "seed*", "model", "metrics.jsonl"))):
        parts = path.split(os.sep)
        variant, seed = parts[-4], int(parts[-3][4:])
        with open(path) as f:
            out[(variant, seed)] = run_gap([json.loads(l) for l in f])
    return out


def self_test():
    recs = [{"type": "train", "update": u, "nll": 3.0 - u / 1000, "loss": 3.2 - u / 1000} for u in range(50, 1001, 50)]
    recs += [{"type": "valid", "update": u, "loss": 4.0 - (u / 1000 if u <= 600 else 0.5 - u / 10000),
              "nll": 3.9 - u / 2000} for u in range(100, 1001, 100)]
    recs.append({"type": "end", "reason": "early stopping", "best": 4.0 - 0.6, "update": 1000})
    g = run_gap(recs)
    assert g["best_update"] == 600 and g["train_updates"] == [550, 600], g
    assert abs(g["train_nll"] - (3.0 - 0.575)) < 1e-12 and abs(g["gap_nll"] - (3.6 - 2.425)) < 1e-12
    assert g["best_matches_end"]
    iv = welch([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], 0.95)
    assert abs(iv["df"] - 8) < 1e-9 and abs(iv["hi"] - (2 + 2.306004135)) < 1e-6
    assert verdict_below(welch([5, 6, 7, 8, 9], [1, 2, 3, 4, 5], 0.95)) == "reproduced"
    assert verdict_below(welch([1, 2, 3, 4, 5], [5, 6, 7, 8, 9], 0.95)) == "contradicted"
    print("self-test passed")


def main(argv):
    if argv and argv[0] == "--self-test":
        self_test()
        return
    root = argv[0] if argv else "docs/results"
    out = argv[1] if len(argv) > 1 else None
    level = 1 - ALPHA / len(COMPARISONS)
    folders = {f: read_runs(os.path.join(root, f)) for f in {c[1] for c in COMPARISONS + SECONDARY}}

    rows = []
    for folder, runs in sorted(folders.items()):
        for (variant, seed), g in sorted(runs.items()):
            rows.append({"folder": folder, "variant": variant, "seed": seed, **g})
    print("folder\tvariant\tseed\tend\tu*\tvalid nll\ttrain nll\tgap nll\tgap loss")
    for r in rows:
        print(f"{r['folder']}\t{r['variant']}\t{r['seed']}\t{r['end_reason']}\t{r['best_update']}\t"
              f"{r['valid_nll']:.4f}\t{r['train_nll']:.4f}\t{r['gap_nll']:+.4f}\t{r['gap_loss']:+.4f}"
              + ("" if r["best_matches_end"] else "\t(best != end's best)"))

    comparisons = []
    for role, spec in [("decides", c) for c in COMPARISONS] + [("secondary", c) for c in SECONDARY]:
        name, folder, a, b = spec
        runs = folders[folder]
        seeds_a = sorted(s for v, s in runs if v == a)
        seeds_b = sorted(s for v, s in runs if v == b)
        converged = all(runs[(v, s)]["end_reason"] == "early stopping"
                        for v, ss in ((a, seeds_a), (b, seeds_b)) for s in ss)
        c = {"name": name, "folder": folder, "compare": f"{b} - {a}", "role": role, "claimed": "< 0",
             "seeds_a": seeds_a, "seeds_b": seeds_b, "all_converged": converged}
        for key in ("gap_nll", "gap_loss", "valid_nll", "train_nll"):
            c[key] = welch([runs[(a, s)][key] for s in seeds_a], [runs[(b, s)][key] for s in seeds_b], level)
        if role == "decides":
            c["verdict"] = verdict_below(c["gap_nll"]) if converged else "inconclusive (a run had not converged)"
        comparisons.append(c)
        for key in ("gap_nll", "gap_loss", "valid_nll", "train_nll"):
            iv = c[key]
            print(f"{name} {c['compare']}\t{key}\t{iv['delta']:+.4f} [{iv['lo']:+.4f}, {iv['hi']:+.4f}] "
                  f"({100 * level:.1f}%, df {iv['df'] or float('nan'):.2f}, p {iv['p']:.4f})")
        if "verdict" in c:
            print(f"{name} {c['compare']}\tverdict (gap_nll): {c['verdict']}")

    result = {"measure": "valid nll at the best validation - mean train nll over the 100 updates before it (bits/token)",
              "alpha": ALPHA, "m": len(COMPARISONS), "level": level, "window_updates": WINDOW,
              "runs": rows, "comparisons": comparisons}
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
        with open(os.path.join(out, "runs.tsv"), "w") as f:
            keys = ["folder", "variant", "seed", "end_reason", "end_update", "best_update", "valid_nll",
                    "train_nll", "gap_nll", "valid_loss", "train_loss", "gap_loss"]
            f.write("\t".join(keys) + "\n")
            for r in rows:
                f.write("\t".join(f"{r[k]:.6f}" if isinstance(r[k], float) else str(r[k]) for k in keys) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
