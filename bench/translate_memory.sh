#!/usr/bin/env bash
# The peak memory of `yoke translate --input FILE` against the file's size: it reads the file a
# window of lines at a time (cmd_translate.cpp, kFileWindow), so the peak must stay flat where it
# once grew with the file (2 MB -> 308 MB, 18 MB -> 974 MB). The input is the model's data test
# source repeated to each size; greedy, one thread, output to /dev/null.
#
#   bash bench/translate_memory.sh MODEL_DIR SOURCE_FILE [SIZE_MB ...]     (default sizes: 2 20 100)
#
# Prints, per size: lines, peak resident memory (GNU time's maximum RSS) and seconds. A small model
# keeps the 100 MB run short (about 1.5M sentences). Environment: YOKE (default build/yoke).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,10p "$0" >&2; exit 2; }
model=$1 src=$2
shift 2
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2 20 100)
yoke=${YOKE:-build/yoke}
[ -x "$yoke" ] || { echo "translate_memory: $yoke: not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "translate_memory: needs GNU time (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%8s %10s %12s %10s\n' "MB" "lines" "peak RSS" "seconds"
for mb in "${sizes[@]}"; do
  input="$tmp/input-$mb.txt"
  : > "$input"
  while [ "$(stat -c %s "$input")" -lt $((mb * 1000000)) ]; do cat "$src" >> "$input"; done
  head -c $((mb * 1000000)) "$input" | sed '$d' > "$input.cut"   # whole lines, about MB megabytes
  mv "$input.cut" "$input"
  lines=$(wc -l < "$input")
  /usr/bin/time -f "%M %e" -o "$tmp/time" "$yoke" translate --model "$model" --input "$input" --beam 1 \
    --threads 1 --workers 1 > /dev/null 2> "$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
  read -r kb seconds < "$tmp/time"
  printf '%8s %10s %9s MB %10s\n' "$mb" "$lines" "$((kb / 1024))" "$seconds"
done
