#!/usr/bin/env bash
# Data scaling: `yoke prepare` and the start of `yoke train` on corpora of growing size, built
# from Multi30k by bench/make_corpus.py (anyone can run it). Prints, per size, prepare's wall time
# and peak RSS and training's time to its first update and peak RSS: the times should grow about
# linearly with the corpus and the memory stay flat.
#   bash bench/data_scaling.sh [SIZES...]        (default: 500000 2000000 8000000)
# Environment: WORK (scratch directory, default /tmp/yoke-data-scaling), VOCAB (joint BPE size,
# 32000), THREADS (prepare --threads, default: one per core), REF_YOKE (another yoke binary, e.g.
# an older build: its prepare runs right after this one's on the same corpus, for a ratio).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
YOKE=${YOKE:-$HERE/../build/yoke}
WORK=${WORK:-/tmp/yoke-data-scaling}
VOCAB=${VOCAB:-32000}
SIZES=("$@"); [ ${#SIZES[@]} -gt 0 ] || SIZES=(500000 2000000 8000000)
mkdir -p "$WORK"
M30K="$HERE/../../shared/data/multi30k"
[ -e "$M30K/train.en.gz" ] || { echo "needs Multi30k at $M30K"; exit 1; }

# measure LABEL CMD...: runs CMD, prints "LABEL wall_s peak_rss_mb cpu_s" (cpu: user + system, all
# threads: less disturbed than the wall time when something else runs on the machine).
measure() {
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$WORK/time.txt" "$@" >"$WORK/$label.log" 2>&1 || { cat "$WORK/$label.log" >&2; echo "$label failed" >&2; return 1; }
  read -r wall kb user sys <"$WORK/time.txt"
  echo "$label $wall $((kb / 1024)) $(awk "BEGIN { print $user + $sys }")"
}

printf '| pairs | text MB | prepare s | prepare CPU s | prepare peak RSS MB | shards | train start s | train peak RSS MB |%s\n' "${REF_YOKE:+ reference prepare s | reference CPU s | reference peak RSS MB |}"
printf '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |%s\n' "${REF_YOKE:+ ---: | ---: | ---: |}"
for n in "${SIZES[@]}"; do
  corpus="$WORK/corpus-$n"
  [ -e "$corpus/train.de" ] || /usr/bin/python3 "$HERE/make_corpus.py" --pairs "$n" --out "$corpus"
  mb=$(( ($(stat -c %s "$corpus/train.en") + $(stat -c %s "$corpus/train.de")) / 1000000 ))
  prep=(prepare --train-src "$corpus/train.en" --train-tgt "$corpus/train.de" --valid-src "$M30K/val.en.gz"
        --valid-tgt "$M30K/val.de.gz" --joint --vocab-size "$VOCAB" --force ${THREADS:+--threads $THREADS})
  read -r _ p_wall p_rss p_cpu < <(measure "prepare-$n" "$YOKE" "${prep[@]}" --out "$WORK/data-$n")
  ref=""
  if [ -n "${REF_YOKE:-}" ]; then
    read -r _ r_wall r_rss r_cpu < <(measure "ref-prepare-$n" "$REF_YOKE" "${prep[@]}" --out "$WORK/ref-data-$n")
    ref=" $r_wall | $r_cpu | $r_rss |"
    rm -rf "$WORK/ref-data-$n"
  fi
  shards=$(ls "$WORK/data-$n" | grep -c '^train.*\.bin$')
  # Start-up: read and check the data, plan the epoch, build the model, one update of a small model.
  train=(train --data "$WORK/data-$n" --save_dir "$WORK/model-$n" --d_model 64 --heads 2 --ffn_dim 128
         --encoder_layers 1 --decoder_layers 1 --max_updates 1 --valid_bleu false --max_tokens 2000)
  read -r _ t_wall t_rss _ < <(measure "train-$n" "$YOKE" "${train[@]}")
  rm -rf "$WORK/model-$n"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |%s\n' "$n" "$mb" "$p_wall" "$p_cpu" "$p_rss" "$shards" "$t_wall" "$t_rss" "$ref"
done
