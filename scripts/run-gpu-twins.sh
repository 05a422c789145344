#!/usr/bin/env bash
# Runs the GPU twins of the CPU grids (configs/grids/*-gpu.grid; configs/grids/README.md, "GPU
# twins") one after the other on one GPU machine, each into OUT/NAME, and exports each report into
# RESULTS/NAME. On the way it
#   - builds build-gpu/yoke with scripts/gpu-build.sh when it is missing (GPU_BUILD_ARGS, e.g.
#     "--debs DIR", are passed on);
#   - prepares every data directory and pair file a twin names that is missing, with the commands
#     the grids give (docs/results/README.md; scripts/prepare-multilingual-lm.sh);
#   - trains the tied and untied LMs common to the seed004-lm-*-gpu twins and lm-multi30k-en-gpu
#     once, in seed004-lm-gradshare-gpu, and copies them into the others (as run-seed004.sh does);
#   - removes the checkpoints of every finished run (the reports are made without them, and a
#     Transformer-big run writes ≈12 GB), unless KEEP_CHECKPOINTS=1; seed001-norms-training-gpu
#     keeps its numbered checkpoints until scripts/norms-over-training.sh has measured them.
# Interrupted (Ctrl-C, or `timeout -s INT SECONDS scripts/run-gpu-twins.sh ...`), the same
# command goes on where it stopped: finished runs are skipped.
# Usage: scripts/run-gpu-twins.sh [NAME ...]   NAME: a twin's grid file without .grid (default:
#          all, cheapest first); scripts/run-gpu-twins.sh --list: the twins and their run times
# Environment: YOKE (default build-gpu/yoke), OUT (default experiments), RESULTS (default
#          docs/results), MULTI30K (default ../shared/data/multi30k), KEEP_CHECKPOINTS=1, GPU_BUILD_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."

# Cheapest first (configs/grids/README.md has each one's estimated time on one H100).
all_twins=(
  seed004-lm-gradshare-gpu seed004-lm-alpha-gpu seed004-lm-factored-gpu seed004-lm-scale-gpu
  seed004-multilingual-1-gpu seed001-ende-gpu seed004-multilingual-2-gpu lm-multi30k-en-gpu
  seed004-multilingual-4-gpu seed001-norms-training-gpu seed001-dynamicconv-gpu seed001-dim-d256-gpu
  seed001-dim-d512-gpu seed003-lambda-gpu seed003-threshold-gpu seed001-dim-d1024-gpu seed003-ende-gpu seed003-encs-gpu
)

if [ "${1:-}" = --list ]; then
  for name in "${all_twins[@]}"; do
    t=$(sed -n 's/^# Run time on one H100: \(.*\) (estimate.*/\1/p' "configs/grids/$name.grid")
    printf '%-30s %s\n' "$name" "${t:-(see configs/grids/README.md)}"
  done
  exit 0
fi
case "${1:-}" in -h|--help) sed -n 2,19p "$0"; exit 0 ;; esac

twins=("$@")
[ ${#twins[@]} -gt 0 ] || twins=("${all_twins[@]}")
for name in "${twins[@]}"; do
  [ -f "configs/grids/$name.grid" ] || { echo "run-gpu-twins: configs/grids/$name.grid: no such grid (--list)" >&2; exit 2; }
done

yoke=${YOKE:-build-gpu/yoke}
out=${OUT:-experiments}
results=${RESULTS:-docs/results}
export MULTI30K=${MULTI30K:-../shared/data/multi30k}
S=$MULTI30K
if [ ! -x "$yoke" ]; then
  if [ "$yoke" = build-gpu/yoke ]; then
    # shellcheck disable=SC2086  # GPU_BUILD_ARGS is a list of options
    scripts/gpu-build.sh ${GPU_BUILD_ARGS:-}
  fi
  [ -x "$yoke" ] || { echo "run-gpu-twins: $yoke: not built (scripts/gpu-build.sh)" >&2; exit 1; }
fi

# --- data -----------------------------------------------------------------------------------------

# prepare_mt LANG DIR [--joint]: Multi30k En→LANG, BPE 8000 (docs/results/README.md).
prepare_mt() {
  local lang=$1 dir=$2
  shift 2
  "$yoke" prepare --train-src "$S/train.en.gz" --train-tgt "$S/train.$lang.gz" \
    --valid-src "$S/val.en.gz" --valid-tgt "$S/val.$lang.gz" \
    --test "flickr2016:$S/test_2016_flickr.en.gz:$S/test_2016_flickr.$lang.gz" \
    "$@" --vocab-size 8000 --out "$dir"
}

ensure_data() {
  local dir=$1
  if [ -f "$dir/meta.json" ]; then
    # The seed004-lm-* grids need V = 8000 here. A checkout of 2026-11-25 06:55 to 07:40 had
    # scripts/prepare-multilingual-lm.sh en write V = 4000 under this name; it writes -v4000 now.
    if [ "$dir" = data/multi30k-lm-en ] && ! grep -Eq '"tgt_vocab_size": *8000([^0-9]|$)' "$dir/meta.json"; then
      echo "run-gpu-twins: $dir holds another vocabulary than the 8000 subwords the seed004-lm-* grids need" >&2
      echo "  (an older scripts/prepare-multilingual-lm.sh en wrote 4000 there); prepare it again:" >&2
      echo "  $yoke prepare --lm --train $S/train.en.gz --valid $S/val.en.gz --test flickr2016:$S/test_2016_flickr.en.gz --vocab-size 8000 --out $dir --force" >&2
      exit 1
    fi
    return 0
  fi
  echo "run-gpu-twins: preparing $dir" >&2
  case "$dir" in
    data/multi30k-ende) prepare_mt de "$dir" --joint ;;
    data/multi30k-ende-sep) prepare_mt de "$dir" ;;
    data/multi30k-encs) prepare_mt cs "$dir" --joint ;;
    data/multi30k-encs-sep) prepare_mt cs "$dir" ;;
    data/multi30k-lm-en)
      "$yoke" prepare --lm --train "$S/train.en.gz" --valid "$S/val.en.gz" \
        --test "flickr2016:$S/test_2016_flickr.en.gz" --vocab-size 8000 --out "$dir" ;;
    data/multi30k-lm-en-v4000) YOKE=$yoke scripts/prepare-multilingual-lm.sh en ;;
    data/multi30k-lm-en-de) YOKE=$yoke scripts/prepare-multilingual-lm.sh en de ;;
    data/multi30k-lm-en-de-fr-cs) YOKE=$yoke scripts/prepare-multilingual-lm.sh en de fr cs ;;
    *) echo "run-gpu-twins: no recipe for $dir" >&2; exit 1 ;;
  esac
}

# ensure_pairs FILE: shared-private's pair file: pairs-tX.tsv at threshold X (seed003-threshold
# grids), pairs.tsv at seed003-ende-cpu.grid's 0.02.
ensure_pairs() {
  local file=$1 threshold=0.02
  [ -f "$file" ] && return 0
  case "$(basename "$file")" in pairs-t*.tsv) threshold=$(basename "$file" .tsv); threshold=${threshold#pairs-t} ;; esac
  ensure_data "$(dirname "$file")"
  "$yoke" pair --data "$(dirname "$file")" --threshold "$threshold" --out "$file"
}

# The values of KEY in the grid (and, for data, in its config when the grid sets none).
grid_values() {
  sed -n "s/^[[:space:]]*$2[[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/p" "$1" | sort -u
}

prepare_for() {
  local grid=$1 dirs
  dirs=$(grid_values "$grid" data)
  [ -n "$dirs" ] || dirs=$(grid_values "$(grid_values "$grid" config)" data)
  local d f
  for d in $dirs; do ensure_data "$d"; done
  for f in $(grid_values "$grid" pairs); do ensure_pairs "$f"; done
}

# --- runs -------------------------------------------------------------------------------------------

# prune DIR [all|trainer]: the checkpoints of DIR's finished runs (trainer: only the trainer's
# checkpoint_last/best, keeping the numbered ones).
prune() {
  [ "${KEEP_CHECKPOINTS:-0}" = 1 ] && return 0
  local dir=$1 what=${2:-all} run
  for run in "$dir"/runs/*/seed*; do
    [ -f "$run/result.json" ] || continue
    if [ "$what" = all ]; then
      rm -f "$run"/model/*.ykp
    else
      rm -f "$run/model/checkpoint_last.ykp" "$run/model/checkpoint_best.ykp"
    fi
  done
  return 0
}

pruner=""
stop_pruner() {
  if [ -n "$pruner" ]; then
    kill "$pruner" 2>/dev/null || true
    wait "$pruner" 2>/dev/null || true
    pruner=""
  fi
}
trap stop_pruner EXIT

# share NAME VARIANT...: seed004-lm-gradshare-gpu's finished runs of VARIANT, copied into NAME's
# folder (the same [base] and variant settings, so the same runs).
share() {
  local name=$1 variant from to
  shift
  for variant in "$@"; do
    for from in "$out/seed004-lm-gradshare-gpu/runs/$variant"/seed*; do
      [ -f "$from/result.json" ] || continue
      to="$out/$name/runs/$variant/$(basename "$from")"
      [ -e "$to" ] && continue
      mkdir -p "$(dirname "$to")"
      cp -r "$from" "$to"
    done
  done
}

run_twin() {
  local name=$1 grid="configs/grids/$1.grid" dir="$out/$1" mode=all rc=0 t0
  t0=$(date +%s)
  echo "run-gpu-twins: $name — $(sed -n 's/^# Run time on one H100: \(.*\) (estimate.*/\1/p' "$grid") on one H100" >&2
  prepare_for "$grid"
  case "$name" in
    seed004-lm-alpha-gpu|seed004-lm-factored-gpu) share "$name" tied ;;
    seed004-lm-scale-gpu|lm-multi30k-en-gpu) share "$name" untied tied ;;
    seed001-norms-training-gpu) mode=trainer ;;
  esac
  (while sleep 60; do prune "$dir" "$mode"; done) &
  pruner=$!
  "$yoke" experiment --grid "$grid" --out "$dir" || rc=$?
  stop_pruner
  if [ "$rc" -ne 0 ]; then
    echo "run-gpu-twins: $name stopped (exit status $rc); the same command goes on where it stopped" >&2
    exit "$rc"
  fi
  prune "$dir" "$mode"
  "$yoke" report "$dir" --export "$results/$name"
  if [ "$name" = seed001-norms-training-gpu ]; then
    YOKE=$yoke bash scripts/norms-over-training.sh "$dir" "$results/$name/norms"
    prune "$dir" all
  fi
  echo "run-gpu-twins: $name done in $(( ($(date +%s) - t0) / 60 )) min: $results/$name" >&2
}

for name in "${twins[@]}"; do run_twin "$name"; done
