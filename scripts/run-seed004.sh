#!/usr/bin/env bash
# Runs the four seed 004 grids (configs/grids/seed004-lm-*.grid) one after the other, each into
# OUT/seed004-lm-NAME. Runs that two grids define alike (the tied and untied models at d=128,
# 2 layers) are trained once, in the gradshare grid, and copied into the others before they start,
# where the runner finds them done. Prepares the data when it is missing. Interrupted, the same
# command goes on where it stopped.
# Usage: scripts/run-seed004.sh [OUT]       (default: experiments; yoke from build/, or $YOKE)
set -euo pipefail
cd "$(dirname "$0")/.."
yoke=${YOKE:-build/yoke}
out=${1:-experiments}
data=../shared/data/multi30k
if [ ! -f data/multi30k-lm-en/meta.json ]; then
  "$yoke" prepare --lm --train "$data/train.en.gz" --valid "$data/val.en.gz" \
    --test "flickr2016:$data/test_2016_flickr.en.gz" --vocab-size 8000 --out data/multi30k-lm-en
fi
run() { "$yoke" experiment --grid "configs/grids/seed004-lm-$1.grid" --out "$out/seed004-lm-$1"; }
# share GRID VARIANT...: the gradshare grid's finished runs of VARIANT, copied into GRID's folder.
share() {
  local grid=$1; shift
  for variant in "$@"; do
    for seed in 1 2 3; do
      local from="$out/seed004-lm-gradshare/runs/$variant/seed$seed" to="$out/seed004-lm-$grid/runs/$variant/seed$seed"
      if [ -f "$from/result.json" ] && [ ! -e "$to" ]; then
        mkdir -p "$(dirname "$to")"
        cp -r "$from" "$to"
      fi
    done
  done
}
run gradshare
share alpha tied
share factored tied
share scale tied untied
run alpha
run factored
run scale
