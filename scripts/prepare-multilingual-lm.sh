#!/usr/bin/env bash
# Language-model data over several Multi30k languages with one joint vocabulary (seed 004 §5.3,
# configs/grids/seed004-multilingual-*-cpu.grid): the captions of every language given, one
# after another (training shuffles them), a BPE vocabulary of 4000 subwords per language, and one
# test set per language (flickr2016-LANG), so that each language's perplexity can be read apart.
# Usage: scripts/prepare-multilingual-lm.sh [--out DIR] LANG [LANG ...]    e.g. en de fr cs
#   writes data/multi30k-lm-LANG1-LANG2-... (or DIR); for one language data/multi30k-lm-LANG-v4000,
#   so that it never takes the name of the V = 8000 data/multi30k-lm-en of the seed004-lm-* grids.
#   MULTI30K (default ../shared/data/multi30k) is read. A DIR that already holds these data (its
#   vocabulary has the size asked for) is kept; any other non-empty DIR is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
out=""
if [ "${1:-}" = --out ]; then
  [ $# -ge 2 ] || { sed -n 2,9p "$0" >&2; exit 2; }
  out=$2
  shift 2
fi
[ $# -ge 1 ] || { sed -n 2,9p "$0" >&2; exit 2; }
src=${MULTI30K:-../shared/data/multi30k}
yoke=${YOKE:-build/yoke}
name=$(IFS=-; echo "$*")
if [ $# -eq 1 ]; then out=${out:-data/multi30k-lm-$name-v4000}; else out=${out:-data/multi30k-lm-$name}; fi
vocab=$((4000 * $#))
if [ -f "$out/spm.vocab" ] && [ "$(wc -l <"$out/spm.vocab")" -eq "$vocab" ]; then
  echo "prepare-multilingual-lm: $out already holds a $vocab-subword vocabulary: kept" >&2
  exit 0
fi
for lang in "$@"; do
  for split in train val test_2016_flickr; do
    [ -f "$src/$split.$lang.gz" ] || { echo "prepare-multilingual-lm: $src/$split.$lang.gz: missing" >&2; exit 2; }
  done
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tests=()
for lang in "$@"; do
  zcat "$src/train.$lang.gz" >>"$tmp/train.txt"
  zcat "$src/val.$lang.gz" >>"$tmp/valid.txt"
  tests+=(--test "flickr2016-$lang:$src/test_2016_flickr.$lang.gz")
done
"$yoke" prepare --lm --train "$tmp/train.txt" --valid "$tmp/valid.txt" "${tests[@]}" \
  --vocab-size "$vocab" --out "$out"
echo "prepare-multilingual-lm: $out ($# language(s), vocabulary $((4000 * $#)))" >&2
