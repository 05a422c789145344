#!/usr/bin/env python3
"""Seed 004 §5.3 across language counts: one table from the reports of the
seed004-multilingual-{1,2,4} experiments (exported folders or experiment folders).

Per language count: the vocabulary, the word matrices' share of the parameters (counted, and the
closed form 1/(1 + 12Ld/V) tied, 2Vd/(2Vd + 12Ld²) untied), the tied-vs-untied perplexity gap
on every test set as the report's test computed it, that gap as a log ratio
ln(PPL_tied / PPL_untied) (the difference in nats per subword, comparable across vocabularies),
and the untied models' tying gap (mean cosine of each word's input and output rows, `yoke analyze`).
Usage: scripts/multilingual-summary.py DIR_1 DIR_2 DIR_4 ...
"""
import glob, json, math, os, statistics, sys

if len(sys.argv) < 2:
    sys.exit(__doc__)

def fmt_ci(t):
    if not t.get("delta_ci95"):  # one seed a side: no interval
        return f"{t['delta_ppl']:+.2f} (one seed)"
    lo, hi = t["delta_ci95"]
    return f"{t['delta_ppl']:+.2f} [{lo:+.2f}, {hi:+.2f}]"

rows, per_test = [], []
for folder in sys.argv[1:]:
    report = json.load(open(os.path.join(folder, "report.json")))
    variants = {v["variant"]: v for v in report["variants"]}
    untied, tied = variants["untied"], variants["tied"]
    tests = report["test_names"]
    langs = [t.rsplit("-", 1)[-1] for t in tests]
    start = next(json.loads(line) for path in glob.glob(os.path.join(folder, "runs", "tied", "seed*", "model", "metrics.jsonl"))
                 for line in open(path) if '"type":"start"' in line)
    vocab = start["config"]["tgt_vocab_size"]
    gaps = []
    for path in glob.glob(os.path.join(folder, "runs", "untied", "seed*", "analysis", "analysis.json")):
        g = json.load(open(path)).get("tying_gap")
        if g is not None:
            gaps.append(g)
    log_ratios = []
    for test in tests:
        u, t = untied["tests"][test], tied["tests"][test]
        ratio = [math.log(b / a) for a, b in zip(u["ppl"]["values"], t["ppl"]["values"])]
        log_ratios.append(statistics.mean(ratio))
        per_test.append((len(langs), test, u["ppl"]["mean"], t["ppl"]["mean"], fmt_ci(t),
                         statistics.mean(ratio), t["verdict"]["verdict"]))
    rows.append((len(langs), "+".join(langs), vocab, untied, tied, statistics.mean(log_ratios),
                 statistics.mean(gaps) if gaps else float("nan"), len(gaps)))

print("| languages | V | Params untied / tied | word share untied: counted (closed form) | tied: counted (closed form) "
      "| ln(PPL tied / untied), mean over the languages' tests | untied tying gap (cosine of input and output rows) |")
print("| :--- | ---: | ---: | ---: | ---: | ---: | ---: |")
for k, langs, vocab, u, t, lr, gap, n in rows:
    print(f"| {k} ({langs}) | {vocab} | {u['params'] / 1e6:.2f}M / {t['params'] / 1e6:.2f}M "
          f"| {100 * u['emb_fraction']:.1f}% ({100 * u['emb_fraction_closed_form']:.1f}%) "
          f"| {100 * t['emb_fraction']:.1f}% ({100 * t['emb_fraction_closed_form']:.1f}%) "
          f"| {lr:+.3f} | {gap:.4f} ({n} seed{'s' if n != 1 else ''}) |")
print()
print("| languages | test | PPL untied | PPL tied | Δ PPL [95% CI] | ln(PPL tied / untied) | verdict |")
print("| ---: | :--- | ---: | ---: | ---: | ---: | :--- |")
for k, test, u, t, ci, lr, verdict in per_test:
    print(f"| {k} | {test} | {u:.2f} | {t:.2f} | {ci} | {lr:+.3f} | {verdict} |")
