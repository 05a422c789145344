#!/usr/bin/env bash
# Two yoke binaries decoding the same model and sentences, alternated (A, B, A, B, ...) so that
# drift in the machine's speed hits both: the before-and-after of a change to decoding.
#   bench/decode_ab.sh A_YOKE B_YOKE MODEL_DIR SRC_FILE [--rounds N] [--beam B] [--threads T] [--workers W]
# Each run is `yoke translate --threads T --workers W` (T = 1, W = 1 by default); its rate is the
# "sentences/s" it prints (model loading excluded). Both use one fp32 product (YOKE_FP32_KERNEL,
# onednn unless set), as the product is otherwise chosen by timing at load and could differ
# between runs. Prints each round's rates, the median of B / A over the rounds, and whether the
# two binaries' translations are the same bytes.
set -euo pipefail
usage="usage: bench/decode_ab.sh A_YOKE B_YOKE MODEL_DIR SRC_FILE [--rounds N] [--beam B] [--threads T] [--workers W]"
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
a=$1 b=$2 model=$3 src=$4
shift 4
rounds=3 beam=4 threads=1 workers=1
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --beam) beam=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
export YOKE_FP32_KERNEL=${YOKE_FP32_KERNEL:-onednn}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rate() {  # BINARY OUT: translates, prints its sentences/s
  "$1" translate --model "$model" --input "$src" --beam "$beam" --threads "$threads" --workers "$workers" >"$2" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; exit 1; }
  sed -n 's/.*(\([0-9.]*\) sentences\/s).*/\1/p' "$tmp/err" | tail -1
}

ratios=()
echo "| round | A sentences/s | B sentences/s | B / A |"
echo "| ---: | ---: | ---: | ---: |"
for r in $(seq 1 "$rounds"); do
  ra=$(rate "$a" "$tmp/a.txt")
  rb=$(rate "$b" "$tmp/b.txt")
  ratio=$(python3 -c "print(f'{$rb / $ra:.3f}')")
  ratios+=("$ratio")
  echo "| $r | $ra | $rb | $ratio |"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | python3 -c "import sys; v=[float(x) for x in sys.stdin]; print(f'{v[len(v)//2]:.3f}' if len(v)%2 else f'{(v[len(v)//2-1]+v[len(v)//2])/2:.3f}')")
same=$(cmp -s "$tmp/a.txt" "$tmp/b.txt" && echo "the same bytes" || echo "different")
echo
echo "B / A median over $rounds rounds: $median; beam $beam, $threads thread(s), $workers worker(s), fp32 product $YOKE_FP32_KERNEL; translations: $same"
