#!/usr/bin/env bash
# Seed 004 §3.2 ("the regularization effect [of tying] is most pronounced for low-frequency
# tokens") on the language models of an experiment: for every run, `yoke eval-lm --bands --json`
# splits the test perplexity by how often the predicted subword occurs in the training data
# (lm/frequency_bands.h); then one table per band: each variant's perplexity (mean ± std over
# seeds) and, per seed, each variant's mean NLL per token minus the baseline's (experiment.json).
# Run it from the directory the experiment was trained in: the models' config.data is relative to
# it. TRAIN_COUNTS_FROM=DIR counts another data directory (it must hold the models' vocabulary);
# MACHINE and NOTE (text) go into summary.md's header.
# Usage: scripts/lm-frequency-bands.sh EXPERIMENT_DIR TEXT OUT_DIR [CHECKPOINT]
#   e.g. scripts/lm-frequency-bands.sh experiments/seed004-lm-gradshare \
#          data/multi30k-lm-en/test.flickr2016.txt docs/results/seed004-lm-frequency-bands-cpu
#   writes OUT_DIR/VARIANT/SEED/bands.json and OUT_DIR/summary.md.   (yoke: build/yoke, or $YOKE)
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,12p "$0" >&2; exit 2; }
exp=$1 text=$2 out=$3 ckpt=${4:-}
yoke=${YOKE:-build/yoke}
[ -d "$exp/runs" ] || { echo "lm-frequency-bands: $exp/runs: no runs (an experiment folder written by yoke experiment)" >&2; exit 2; }
[ -f "$text" ] || { echo "lm-frequency-bands: $text: no such text" >&2; exit 2; }
extra=()
[ -n "$ckpt" ] && extra+=(--checkpoint "$ckpt")
[ -n "${TRAIN_COUNTS_FROM:-}" ] && extra+=(--train-counts-from "$TRAIN_COUNTS_FROM")
mkdir -p "$out"
for run in "$exp"/runs/*/seed*; do
  variant=$(basename "$(dirname "$run")") seed=$(basename "$run")
  mkdir -p "$out/$variant/$seed"
  "$yoke" eval-lm --model "$run/model" --text "$text" --bands --json --threads 1 ${extra[@]+"${extra[@]}"} \
    > "$out/$variant/$seed/bands.json.tmp"
  mv "$out/$variant/$seed/bands.json.tmp" "$out/$variant/$seed/bands.json"
  echo "lm-frequency-bands: $variant $seed done" >&2
done
src=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit+dirty"
machine=${MACHINE:-$(uname -m), $(nproc) cores}
python3 - "$exp" "$out" "$text" "$commit" "$0 $*" "${TRAIN_COUNTS_FROM:-}" "$machine" "${NOTE:-}" "$PWD" "$yoke" <<'PY'
import datetime, json, math, os, sys
exp, out, text, commit, command, counts_from, machine, note, cwd, yoke = sys.argv[1:11]
def signed(x): return f"{x:+.3f}".replace("-", "\u2212")
meta = json.load(open(os.path.join(exp, "experiment.json")))
variants = [v for v in meta["variants"] if os.path.isdir(os.path.join(out, v))]
baseline = meta.get("baseline") or variants[0]
runs = {v: {s: json.load(open(os.path.join(out, v, s, "bands.json")))
            for s in sorted(os.listdir(os.path.join(out, v))) if os.path.isfile(os.path.join(out, v, s, "bands.json"))}
        for v in variants}
seeds = sorted(set.intersection(*(set(r) for r in runs.values())), key=lambda s: int(s[4:]) if s[4:].isdigit() else s)
first = runs[variants[0]][seeds[0]]
labels = [b["label"] for b in first["bands"]]
# The text and the vocabulary are the runs' own: the same predictions fall in the same bands in
# every run. Stop if not (runs with other vocabularies cannot share one table).
for v in variants:
    for s in seeds:
        r = runs[v][s]
        if [(b["label"], b["tokens"], b["types"]) for b in r["bands"]] != [(b["label"], b["tokens"], b["types"]) for b in first["bands"]]:
            sys.exit(f"lm-frequency-bands: {v}/{s} puts other tokens in the bands than {variants[0]}/{seeds[0]}")
def ms(xs, fmt):
    m = sum(xs) / len(xs)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return f"{fmt.format(m)} ± {fmt.format(s)}"
def band(r, i): return r["bands"][i]
def overall_nll(r): return r["nll_nats"] / r["subwords"]
others = [v for v in variants if v != baseline]
head = ["band (train count)", "tokens", "types"] + [f"{v} ppl" for v in [baseline] + others]
for v in others:
    head += [f"{v} − {baseline} NLL/token, per seed ({', '.join(seeds)})", f"mean"]
lines = ["| " + " | ".join(head) + " |", "| :--- | ---: | ---: |" + " ---: |" * (len(head) - 3)]
rows = [(lab, i) for i, lab in enumerate(labels)] + [("all", None)]
for lab, i in rows:
    tokens = first["subwords"] if i is None else band(first, i)["tokens"]
    types = sum(b["types"] for b in first["bands"]) if i is None else band(first, i)["types"]
    cells = [lab, str(tokens), str(types)]
    if tokens == 0:
        lines.append("| " + " | ".join(cells + ["–"] * (len(head) - 3)) + " |")
        continue
    nll = lambda r: overall_nll(r) if i is None else band(r, i)["nll"]
    for v in [baseline] + others:
        cells.append(ms([math.exp(nll(runs[v][s])) for s in seeds], "{:.2f}"))
    for v in others:
        d = [nll(runs[v][s]) - nll(runs[baseline][s]) for s in seeds]
        cells += [", ".join(signed(x) for x in d), signed(sum(d) / len(d))]
    lines.append("| " + " | ".join(cells) + " |")
# How far each run trained: its last update against its max_updates (metrics.jsonl).
trained = set()
for v in variants:
    for s in seeds:
        with open(os.path.join(exp, "runs", v, s, "model", "metrics.jsonl")) as f:
            recs = [json.loads(l) for l in f if l.strip()]
        start = next(r for r in recs if r.get("type") == "start")
        trained.add((max(r.get("update", 0) for r in recs), start["config"].get("max_updates", 0)))
trained_text = "; ".join(f"{u} updates (max_updates {m})" for u, m in sorted(trained))
tc = first["train_counts"]
edges = ",".join(str(e) for e in tc["band_edges"])
ckpt = os.path.basename(first["checkpoint"])
header = f"""# Perplexity by training frequency of the predicted subword

Seed 004 §3.2 says tying's regularization "is most pronounced for low-frequency tokens". This
table splits each run's test perplexity by how often the predicted subword occurs in the training
data; it states the measured numbers and draws no verdict.

- Experiment: `{exp}`, "{meta.get('title', exp)}" ({len(seeds)} seeds: {', '.join(seeds)}; baseline `{baseline}`), checkpoint `{ckpt}`; the runs trained {trained_text}.
- Text: `{text}` ({first['lines']} lines, {first['subwords']} predicted subwords incl. one end of line per line); scoring: {first['scoring']}.
- Training counts: `{tc['data']}` ({tc['subwords']} subwords, {tc['lines']} lines); band edges {edges}. End of line is
  not a subword of the training text: it has its own row ("end of line", its count = the training lines) and is in no band.
- ppl: exp(mean NLL per token) in the band, mean ± std (n − 1) over seeds. NLL differences: nats per token, same seed,
  {', '.join(others)} minus {baseline}; negative = {', '.join(others)} better. "all" is the per-subword perplexity.
- tokens / types: predictions in the text and their distinct subwords (the same in every run).
"""
ident = f"""
Produced by `{'TRAIN_COUNTS_FROM=' + counts_from + ' ' if counts_from else ''}{command}` in `{cwd}` (yoke: `{yoke}`) on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, commit {commit} (the script's checkout); machine: {machine}.
""" + (f"\n{note}\n" if note else "")
open(os.path.join(out, "summary.md"), "w").write(header + ident + "\n" + "\n".join(lines) + "\n")
print("\n".join(lines))
PY
