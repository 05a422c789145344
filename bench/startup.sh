#!/usr/bin/env bash
# How long a command takes to start: `yoke` (the starter, src/starter/starter.cpp) against
# `yoke-engine` run directly, which loads LibTorch, sets the math libraries' environment and
# starts itself again; or, with --against OLD_BUILD, OLD_BUILD/yoke against this build's yoke.
# Rounds alternate the two; wall seconds of `yoke --version` and of `yoke translate --beam 4` of
# SRC's first line with MODEL, medians over the rounds.
#   bash bench/startup.sh MODEL_DIR SRC [--rounds 5] [--against OLD_BUILD_DIR]
# Run it with the math settings unset (as a user's shell has them) for the figure the starter saves.
set -euo pipefail
MODEL=${1:?model directory}; SRC=${2:?source sentences}; shift 2
ROUNDS=5
OLD=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --against) OLD=$(cd "$2" && pwd); shift 2 ;;
    *) echo "startup.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
BUILD=$(cd "$(dirname "$0")/../build" && pwd)
if [ -n "$OLD" ]; then
  first="$OLD/yoke"; second="$BUILD/yoke"; labels="old / new"
else
  first="$BUILD/yoke-engine"; second="$BUILD/yoke"; labels="the engine alone / the starter"
fi
for program in "$first" "$second"; do
  [ -x "$program" ] || { echo "startup.sh: no $program (build first)" >&2; exit 2; }
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
  for which in first second; do
    program=${!which}
    echo "$which version $(seconds "$program" --version)"
    echo "$which translate $(seconds "$program" translate --model "$MODEL" --input "$work/one.txt" --beam 4)"
  done
done > "$work/times.txt"
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "medians of $ROUNDS rounds, seconds ($labels):"
for what in version translate; do
  a=$(awk -v w="$what" '$1 == "first" && $2 == w {print $3}' "$work/times.txt" | median)
  b=$(awk -v w="$what" '$1 == "second" && $2 == w {print $3}' "$work/times.txt" | median)
  printf '  %-10s %6.2f / %6.2f\n' "$what" "$a" "$b"
done
