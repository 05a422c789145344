#!/usr/bin/env bash
# Seed 004 §4.5's claim on the models of an experiment with a tied and an untied variant: "the
# tied matrix therefore evolves to resemble an output embedding more than an input embedding".
# For every seed, `yoke analyze --model TIED/seedN --against UNTIED/seedN` compares the tied
# matrix W with the untied model's input embedding E and output matrix U (analysis/
# matrix_resemblance.h: Spearman's ρ of pair cosines, kNN-10 overlap, linear CKA); then the same
# with the seeds rotated (tied seedN against untied seed N+1), to show that the numbers do not
# come from a shared seed. One table, mean ± std over the pairs, in OUT_DIR/summary.md.
# The runs must still hold their checkpoints (an experiment folder, not an export).
# Usage: scripts/tied-resemblance.sh EXPERIMENT_DIR OUT_DIR [CHECKPOINT [TIED UNTIED]]
#   e.g. NOTE="Early training: 200 updates, not converged." scripts/tied-resemblance.sh \
#          experiments/seed004-lm-gradshare docs/results/seed004-lm-tied-resemblance-cpu checkpoint_last.ykp
# YOKE (default build/yoke) is the binary; MACHINE and NOTE go into the summary's header.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,15p "$0" >&2; exit 2; }
exp=$1 out=$2 ckpt=${3:-checkpoint_best.ykp} tied=${4:-tied} untied=${5:-untied}
yoke=${YOKE:-build/yoke}
[ -d "$exp/runs/$tied" ] && [ -d "$exp/runs/$untied" ] ||
  { echo "tied-resemblance: $exp/runs needs variants $tied and $untied" >&2; exit 2; }
seeds=()
for run in "$exp/runs/$tied"/seed*; do
  seed=$(basename "$run")
  [ -d "$exp/runs/$untied/$seed" ] && seeds+=("$seed")
done
[ ${#seeds[@]} -ge 1 ] || { echo "tied-resemblance: no seed has both variants" >&2; exit 2; }
mkdir -p "$out"

compare() {  # TIED_SEED UNTIED_SEED DESTINATION
  local a="$exp/runs/$tied/$1/model" b="$exp/runs/$untied/$2/model"
  for m in "$a" "$b"; do
    [ -f "$m/$ckpt" ] || { echo "tied-resemblance: $m/$ckpt missing (exported folders keep no checkpoints)" >&2; exit 2; }
  done
  "$yoke" analyze --model "$a" --checkpoint "$ckpt" --against "$b" --against-checkpoint "$ckpt" \
    --out "$3" --threads 1 > /dev/null
  # Only analysis.json is kept: the pictures are the experiment's own.
  find "$3" -type f ! -name analysis.json -delete
  echo "tied-resemblance: $tied $1 against $untied $2 done" >&2
}
n=${#seeds[@]}
for ((i = 0; i < n; i++)); do
  compare "${seeds[i]}" "${seeds[i]}" "$out/same-seed/${seeds[i]}"
done
if [ "$n" -ge 2 ]; then
  for ((i = 0; i < n; i++)); do
    next=${seeds[(i + 1) % n]}
    compare "${seeds[i]}" "$next" "$out/cross-seed/${seeds[i]}-vs-$next"
  done
fi

commit=$(git -C "$(dirname "$(readlink -f "$yoke")")" rev-parse --short HEAD 2>/dev/null || echo unknown)
python3 - "$out" "${YOKE:+YOKE=$YOKE }$0 $*" "$commit" "${MACHINE:-2-core development machine}" "${NOTE:-}" "$ckpt" <<'PY'
import datetime, json, math, os, sys
out, command, commit, machine, note, ckpt = sys.argv[1:7]
def ms(v):
    v = [x for x in v if x is not None]
    if not v: return "n/a"
    m = sum(v) / len(v)
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 0.0
    return f"{m:.3f} ± {s:.3f}"
groups = {}
for group in ("same-seed", "cross-seed"):
    gdir = os.path.join(out, group)
    if not os.path.isdir(gdir): continue
    for pair in sorted(os.listdir(gdir)):
        a = json.load(open(os.path.join(gdir, pair, "analysis.json")))["against"]
        groups.setdefault(group, []).append((pair, a))
lines = [f"# Seed 004 §4.5: does the tied matrix resemble the untied model's output matrix more than its input embedding?",
         "",
         f"- command: `{command}` in {os.getcwd()}",
         f"- date: {datetime.date.today().isoformat()}",
         f"- machine: {machine}",
         f"- commit: {commit}",
         f"- checkpoint: {ckpt}"]
if note: lines.append(f"- {note}")
first = next(iter(groups.values()))[0][1]
lines += [f"- {first['words']} words (special ids left out), {first['pairs']} random word pairs for ρ, "
          f"{first['knn_words']} random query words for kNN-{first['k']} (chance overlap {first['knn10_chance']:.4f})",
          "",
          "W: the tied model's word matrix; E: the untied model's input (target) embedding; U: its output matrix.",
          "The two models are trained apart, so only rotation-invariant structure is compared:",
          "ρ = Spearman correlation of the pair cosines; kNN = mean share of the 10 nearest neighbours",
          "(cosine) that the two matrices agree on; CKA = linear CKA of the rows matched by word id.",
          "\"Resembles an output embedding more than an input embedding\" predicts each (W, U) column above",
          "the (W, E) column; (E, U) is the untied model's own two matrices against each other.",
          "The last two columns are not rotation invariant: mean cos(W_i, E_i) and cos(W_i, U_i) of the rows as",
          "stored, near 0 for models initialised apart; far from 0 when the two started from the same matrix",
          "(the same seed), whose structure the other columns then carry too. The cross-seed rows (tied seed N",
          "against untied seed N+1) do not share a starting matrix.",
          "Mean ± std over the pairs of models.",
          "",
          "| pairs of models | n | ρ (W, E) | ρ (W, U) | ρ (E, U) | kNN (W, E) | kNN (W, U) | kNN (E, U) | CKA (W, E) | CKA (W, U) | CKA (E, U) | cos(W_i, E_i) | cos(W_i, U_i) |",
          "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
keys = ["spearman_input", "spearman_output", "spearman_input_output", "knn10_input", "knn10_output",
        "knn10_input_output", "cka_input", "cka_output", "cka_input_output", "row_cosine_input", "row_cosine_output"]
for group, rs in groups.items():
    cells = [ms([r[1][k] for r in rs]) for k in keys]
    lines.append(f"| {group} | {len(rs)} | " + " | ".join(cells) + " |")
lines += ["", "Per pair:", "",
          "| pair | ρ (W, E) | ρ (W, U) | ρ (E, U) | kNN (W, E) | kNN (W, U) | kNN (E, U) | CKA (W, E) | CKA (W, U) | CKA (E, U) | cos(W_i, E_i) | cos(W_i, U_i) |",
          "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for group, rs in groups.items():
    for pair, a in rs:
        cells = ["n/a" if a[k] is None else f"{a[k]:.3f}" for k in keys]
        lines.append(f"| {group} {pair} | " + " | ".join(cells) + " |")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
