#!/usr/bin/env bash
# Language-model data over several Multi30k languages with one joint vocabulary (seed 004 §5.3,
# configs/grids/seed004-multilingual-*-cpu.grid): the captions of every language given, one
# after another (training shuffles them), a BPE vocabulary of 4000 subwords per language, and one
# test set per language (flickr2016-LANG), so that each language's perplexity can be read apart.
# Usage: scripts/prepare-multilingual-lm.sh [--out DIR] LANG [LANG ...]    e.g. en de fr cs
#   writes data/multi30k-lm-LANG1-LANG2-... (or DIR); MULTI30K (default ../shared/data/multi30k) is read.
#   For one language the default name is data/multi30k-lm-en, the V = 8000 data of the seed004-lm-*
#   grids: seed004-multilingual-1-gpu.grid uses --out data/multi30k-lm-en-v4000 instead.
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
out=${out:-data/multi30k-lm-$name}
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
  --vocab-size $((4000 * $#)) --out "$out" --force
echo "prepare-multilingual-lm: $out ($# language(s), vocabulary $((4000 * $#)))" >&2
