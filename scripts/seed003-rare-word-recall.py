#!/usr/bin/python3
"""Seed 003 §3.5 / Table 6: shared-private translates low-frequency source words better than vanilla
and decoder WT (its evidence: one NIST sentence, "sangsheng" -> "killed"). Tested here from the
committed hypotheses of docs/results/seed003-decide-gpu alone: no training, no decoding.

Measure, fixed before it was computed on the real data:

  Data.  The hypotheses runs/SYSTEM/seedN/hyp.flickr2016.txt (SYSTEM = vanilla, decoder,
  shared-private; N = 1..5; 1000 German lines of test_2016_flickr), the references
  test_2016_flickr.de.gz and the training text train.de.gz, both read from the Multi30k folder
  (default /work/shared/data/multi30k; never copied).

  Tokens.  Every line is tokenized by sacreBLEU's 13a rules (re-implemented below, the same rules
  as yoke's src/eval/tokenize_13a.cpp) and lowercased with str.lower(). A "word" is a token with at
  least one alphabetic character (str.isalpha() on some character); punctuation and numbers are
  not words.

  Frequency.  c(w) = the number of times word w occurs in train.de (the same tokenization).

  Primary measure, per run: rare-word recall R = sum over test sentences s and rare words w of
  min(n_ref(s, w), n_hyp(s, w)) / sum over s and rare w of n_ref(s, w), where a rare word has
  1 <= c(w) <= 10 and n_ref, n_hyp count w's occurrences in the reference and in the run's
  hypothesis of sentence s (clipped counts, as BLEU's unigram precision clips, but over the
  reference's occurrences: a recall). One number a run.

  Why a target-side measure: the seed speaks of rare *source* words; tying the three embeddings
  changes how rare words are represented on both sides, and a rare German reference word mostly
  translates a rare English one, so rare target words found in the hypothesis stand in for rare
  source words translated correctly, without an alignment model.

  Secondary (reported, not deciding): the same recall for frequent words (c(w) > 1000), so that a
  reader sees whether a gain is specific to rare words; and for the middle band (11..1000) and
  for words never seen in training (c(w) = 0). Also the difference of differences
  (shared-private - X on rare) - (shared-private - X on frequent), per comparison, by the same
  Welch interval on per-run differences rare - frequent.

  Comparisons (m = 2): shared-private - vanilla and shared-private - decoder, Delta = mean over
  shared-private's 5 runs - mean over the other system's 5 runs.

  Decision rule (docs/results/README.md's rule as the lead fixed it for this row): Welch's t
  interval over the runs (unpaired: the systems differ in shape, so a seed number couples
  nothing), Welch-Satterthwaite df, two-sided, simultaneous over the 2 comparisons by Bonferroni:
  level 1 - 0.05/2 = 97.5%. reproduced: the interval lies wholly above 0; contradicted: wholly
  below 0 (the seed gives no number, so no margin); inconclusive otherwise. Every run must have
  converged: the script checks that the last "end" record of each run's model/metrics.jsonl says
  "early stopping" and refuses the verdict otherwise.

What was known before this script was written: the systems' BLEU on this test set (the folder's
report) and the first three lines of two hypothesis files; no word-level count had been made.

Usage: scripts/seed003-rare-word-recall.py [EXPERIMENT_DIR [MULTI30K_DIR [OUT_DIR]]]
  defaults: docs/results/seed003-decide-gpu, /work/shared/data/multi30k, (no files written)
  Writes OUT_DIR/results.json and OUT_DIR/runs.tsv; prints the table.
  --self-test runs the statistics and the tokenizer on synthetic input and exits.
"""
import collections
import gzip
import json
import os
import re
import sys

from welch import welch  # scripts/welch.py

SYSTEMS = ["vanilla", "decoder", "shared-private"]
SEEDS = [1, 2, 3, 4, 5]
COMPARISONS = [("vanilla", "shared-private"), ("decoder", "shared-private")]  # (A, B): B - A
ALPHA = 0.05
BANDS = {  # name: (lowest count, highest count) inclusive
    "rare": (1, 10),        # primary
    "frequent": (1001, None),
    "middle": (11, 1000),
    "unseen": (0, 0),
}
PRIMARY = "rare"

# sacreBLEU 13a (tokenizer_13a.Tokenizer13a with TokenizerRegexp's rules).
_RE_13A = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line):
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = (line.replace("&quot;", '"').replace("&amp;", "&")
                .replace("&lt;", "<").replace("&gt;", ">"))
    line = f" {line} "
    for pattern, repl in _RE_13A:
        line = pattern.sub(repl, line)
    return line.split()


def words(line):
    return [t for t in tokenize_13a(line.lower()) if any(ch.isalpha() for ch in t)]


def band_of(count):
    for name, (lo, hi) in BANDS.items():
        if count >= lo and (hi is None or count <= hi):
            return name
    return None




def verdict(iv, claimed_sign):
    if claimed_sign > 0:
        if iv["lo"] > 0:
            return "reproduced"
        if iv["hi"] < 0:
            return "contradicted"
    else:
        if iv["hi"] < 0:
            return "reproduced"
        if iv["lo"] > 0:
            return "contradicted"
    return "inconclusive"


def end_reason(metrics_path):
    reason = None
    with open(metrics_path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "end":
                reason = r.get("reason")
    return reason


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f]


def recall_by_band(hyps, refs, freq):
    found = collections.Counter()
    total = collections.Counter()
    for hyp, ref in zip(hyps, refs):
        h = collections.Counter(words(hyp))
        for w, n in collections.Counter(words(ref)).items():
            band = band_of(freq.get(w, 0))
            total[band] += n
            found[band] += min(n, h.get(w, 0))
    return {b: {"recall": found[b] / total[b] if total[b] else float("nan"),
                "found": found[b], "occurrences": total[b]} for b in BANDS}


def self_test():
    assert tokenize_13a("Ein Mann, der 3.5 m läuft.") == ["Ein", "Mann", ",", "der", "3.5", "m", "läuft", "."]
    assert tokenize_13a('Er sagt: "ja"') == ["Er", "sagt", ":", '"', "ja", '"']
    assert words("Ein Mann, 3 Hunde.") == ["ein", "mann", "hunde"]
    freq = {"hund": 5, "ein": 5000, "katze": 500}
    r = recall_by_band(["ein hund ein"], ["ein hund hund katze zebra"], freq)
    assert r["rare"]["found"] == 1 and r["rare"]["occurrences"] == 2
    assert r["frequent"]["recall"] == 1.0 and r["middle"]["recall"] == 0.0
    assert r["unseen"]["occurrences"] == 1
    # Welch against a textbook case: a = 1..5, b = 3..7: delta 2, se 1, df 8.
    iv = welch([1, 2, 3, 4, 5], [3, 4, 5, 6, 7], 0.95)
    assert abs(iv["delta"] - 2) < 1e-12 and abs(iv["se"] - 1) < 1e-12 and abs(iv["df"] - 8) < 1e-9
    assert abs(iv["hi"] - (2 + 2.306004135)) < 1e-6 and verdict(iv, +1) == "inconclusive"
    iv = welch([1, 2, 3, 4, 5], [5, 6, 7, 8, 9], 0.95)
    assert verdict(iv, +1) == "reproduced" and verdict(iv, -1) == "contradicted"
    assert verdict(welch([1, 2, 3], [1, 2, 4], 0.95), +1) == "inconclusive"
    print("self-test passed")


def main(argv):
    if argv and argv[0] == "--self-test":
        self_test()
        return
    exp = argv[0] if len(argv) > 0 else "docs/results/seed003-decide-gpu"
    data = argv[1] if len(argv) > 1 else "/work/shared/data/multi30k"
    out = argv[2] if len(argv) > 2 else None

    freq = collections.Counter()
    for line in read_lines(os.path.join(data, "train.de.gz")):
        freq.update(words(line))
    refs = read_lines(os.path.join(data, "test_2016_flickr.de.gz"))

    runs = {}
    converged = True
    for system in SYSTEMS:
        for seed in SEEDS:
            run = os.path.join(exp, "runs", system, f"seed{seed}")
            hyps = read_lines(os.path.join(run, "hyp.flickr2016.txt"))
            if len(hyps) != len(refs):
                sys.exit(f"{run}: {len(hyps)} hypotheses against {len(refs)} references")
            reason = end_reason(os.path.join(run, "model", "metrics.jsonl"))
            converged &= reason == "early stopping"
            runs[(system, seed)] = {"end_reason": reason, "bands": recall_by_band(hyps, refs, freq)}

    level = 1 - ALPHA / len(COMPARISONS)
    comparisons = []
    for a, b in COMPARISONS:
        per_band = {}
        for band in BANDS:
            xa = [runs[(a, s)]["bands"][band]["recall"] for s in SEEDS]
            xb = [runs[(b, s)]["bands"][band]["recall"] for s in SEEDS]
            per_band[band] = welch(xa, xb, level)
        # Rare minus frequent, per run: is a gain specific to rare words? (secondary)
        da = [runs[(a, s)]["bands"]["rare"]["recall"] - runs[(a, s)]["bands"]["frequent"]["recall"] for s in SEEDS]
        db = [runs[(b, s)]["bands"]["rare"]["recall"] - runs[(b, s)]["bands"]["frequent"]["recall"] for s in SEEDS]
        per_band["rare_minus_frequent"] = welch(da, db, level)
        v = verdict(per_band[PRIMARY], +1) if converged else "inconclusive (a run had not converged)"
        comparisons.append({"compare": f"{b} - {a}", "claimed": "> 0", "verdict": v, "bands": per_band})

    refs_words = collections.Counter()
    for ref in refs:
        for w in words(ref):
            refs_words[band_of(freq.get(w, 0))] += 1
    result = {
        "measure": "clipped recall of reference words by training-count band (13a, lowercase)",
        "primary": PRIMARY, "bands": {k: list(v) for k, v in BANDS.items()},
        "alpha": ALPHA, "m": len(COMPARISONS), "level": level,
        "all_converged": converged,
        "train_de_word_types": len(freq), "reference_occurrences": dict(refs_words),
        "runs": [{"system": s, "seed": n, **runs[(s, n)]} for s, n in sorted(runs, key=lambda k: (SYSTEMS.index(k[0]), k[1]))],
        "comparisons": comparisons,
    }

    print(f"reference word occurrences by band: {dict(refs_words)}; all runs converged: {converged}")
    print("system\tseed\tend\t" + "\t".join(BANDS))
    for r in result["runs"]:
        print(f"{r['system']}\t{r['seed']}\t{r['end_reason']}\t" +
              "\t".join(f"{r['bands'][b]['recall']:.4f}" for b in BANDS))
    for c in comparisons:
        for band, iv in c["bands"].items():
            print(f"{c['compare']}\t{band}\t{iv['delta']:+.4f} [{iv['lo']:+.4f}, {iv['hi']:+.4f}] "
                  f"({100 * iv['level']:.1f}%, df {iv['df'] or float('nan'):.2f}, p {iv['p']:.4f})")
        print(f"{c['compare']}\tverdict ({PRIMARY}): {c['verdict']}")

    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(result, f, indent=1, sort_keys=False)
            f.write("\n")
        with open(os.path.join(out, "runs.tsv"), "w") as f:
            f.write("system\tseed\tend_reason\t" + "\t".join(
                f"{b}_recall\t{b}_found\t{b}_occurrences" for b in BANDS) + "\n")
            for r in result["runs"]:
                f.write(f"{r['system']}\t{r['seed']}\t{r['end_reason']}\t" + "\t".join(
                    f"{r['bands'][b]['recall']:.6f}\t{r['bands'][b]['found']}\t{r['bands'][b]['occurrences']}"
                    for b in BANDS) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
