#!/usr/bin/env bash
# How long a command takes to start: `yoke` (the starter, src/starter/starter.cpp) against
# `yoke-engine` run directly, which loads LibTorch, sets the math libraries' environment and
# starts itself again. Rounds alternate the two; wall seconds of `yoke --version` and of `yoke
# translate --beam 4` of SRC's first line with MODEL, medians over the rounds.
#   bash bench/startup.sh MODEL_DIR SRC [--rounds 5]
# Run it with the math settings unset (as a user's shell has them) for the figure the starter saves.
set -euo pipefail
MODEL=${1:?model directory}; SRC=${2:?source sentences}; shift 2
ROUNDS=5
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "startup.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
BUILD=$(cd "$(dirname "$0")/../build" && pwd)
for program in yoke yoke-engine; do
  [ -x "$BUILD/$program" ] || { echo "startup.sh: no $BUILD/$program (build first)" >&2; exit 2; }
done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
head -1 "$SRC" > "$work/one.txt"
seconds() {  # wall seconds of a command, its output discarded
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}'
}
for round in $(seq "$ROUNDS"); do
  for program in yoke-engine yoke; do
    echo "$program version $(seconds "$BUILD/$program" --version)"
    echo "$program translate $(seconds "$BUILD/$program" translate --model "$MODEL" --input "$work/one.txt" --beam 4)"
  done
done > "$work/times.txt"
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "medians of $ROUNDS rounds, seconds (the engine alone / the starter):"
for what in version translate; do
  engine=$(awk -v w="$what" '$1 == "yoke-engine" && $2 == w {print $3}' "$work/times.txt" | median)
  starter=$(awk -v w="$what" '$1 == "yoke" && $2 == w {print $3}' "$work/times.txt" | median)
  printf '  %-10s %6.2f / %6.2f\n' "$what" "$engine" "$starter"
done
