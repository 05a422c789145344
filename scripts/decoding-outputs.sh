#!/bin/bash
# Every decoding option of `yoke translate` on one test set, one output file each, with their
# checksums: run it with two binaries (say the previous commit's and this one's) to see that a
# change of src/decode/ left every output byte for byte as it was (docs/decoding.md).
#
#   scripts/decoding-outputs.sh YOKE MODEL MODEL2 DATA OUT [SRC REF]
#     YOKE    the yoke binary
#     MODEL   a translation model; MODEL2 another on the same vocabulary (the ensemble)
#     DATA    MODEL's data directory (`yoke pair` makes the shortlist's table from it)
#     OUT     folder for the outputs (created)
#     SRC REF source and reference text (default: Multi30k test_2016_flickr en, de from ../shared/data)
# Prefixes are the reference's first two words on every third line; constraints one or two of its
# words on two lines of four. One thread, so that batching is the same in every run.
# The fp32 product is otherwise picked by timing when a model loads (model/fp32_kernel.h): on a busy
# machine two runs can pick differently and differ in the last bits. One product for every run.
export YOKE_FP32_KERNEL=${YOKE_FP32_KERNEL:-openblas}
set -euo pipefail
[ $# -ge 5 ] || { sed -n 2,13p "$0"; exit 2; }
Y=$1; M=$2; M2=$3; DATA=$4; O=$5
here="$(cd "$(dirname "$0")/.." && pwd)"
SRC=${6:-$here/../shared/data/multi30k/test_2016_flickr.en.gz}
REF=${7:-$here/../shared/data/multi30k/test_2016_flickr.de.gz}
mkdir -p "$O"
zcat -f "$SRC" > "$O/src.txt"
zcat -f "$REF" | python3 -c '
import re, sys
out = sys.argv[1]
ref = sys.stdin.read().split("\n")
with open(out + "/prefix.txt", "w") as p, open(out + "/constraints.txt", "w") as c:
    for i, line in enumerate(ref[:-1] if ref[-1] == "" else ref):
        w = line.split()
        p.write((" ".join(w[:2]) if i % 3 == 0 else "") + "\n")
        words = [x for x in (re.sub(r"[^\w]", "", y) for y in w) if x]
        if i % 4 == 0 and len(words) > 3: c.write(words[-1] + "\t" + words[2] + "\n")
        elif i % 4 == 1 and len(words) > 2: c.write(words[1] + " " + words[2] + "\n")
        else: c.write("\n")
' "$O"
[ -f "$O/table.tsv" ] || "$Y" pair --data "$DATA" --out "$O/pairs.tsv" --table "$O/table.tsv" 2>/dev/null
T="$Y translate --model $M --threads 1 --input $O/src.txt"
$T --beam 1 > "$O/greedy.out"
$T --beam 5 --scores > "$O/beam5.out"
$T --beam 5 --nbest 5 > "$O/nbest5.out"
$T --beam 5 --nbest 3 --lenpen 0.6 > "$O/nbest3-lenpen.out"
$T --beam 4 --prefix-file "$O/prefix.txt" --scores > "$O/prefix.out"
$T --beam 1 --prefix-file "$O/prefix.txt" --scores > "$O/prefix-greedy.out"
$T --beam 4 --constraints "$O/constraints.txt" --scores > "$O/constraints.out"
$T --beam 4 --constraints "$O/constraints.txt" --prefix-file "$O/prefix.txt" --nbest 2 --alignment hard > "$O/combined.out"
$T --beam 5 --alignment hard > "$O/align-hard.out"
$T --beam 3 --alignment soft --alignment-unit subwords > "$O/align-soft.out"
$T --beam 5 --shortlist "$O/table.tsv" --shortlist-k 20 --shortlist-frequent 50 --scores > "$O/shortlist.out"
$T --beam 1 --shortlist "$O/table.tsv" --shortlist-k 20 --shortlist-frequent 50 > "$O/shortlist-greedy.out"
$T --sampling topk --sampling-topk 5 --seed 7 --scores > "$O/sample-topk.out"
$T --sampling topp --sampling-topp 0.8 --temperature 0.8 --prefix-file "$O/prefix.txt" --scores > "$O/sample-topp.out"
E="$Y translate --model $M --model $M2 --threads 1 --input $O/src.txt"
$E --weights 0.3,0.7 --beam 4 --scores > "$O/ensemble.out"
$E --beam 1 > "$O/ensemble-greedy.out"
"$Y" translate --model "$M2" --threads 2 --workers 2 --input "$O/src.txt" --beam 5 --nbest 2 > "$O/workers.out"
head -300 "$O/src.txt" | "$Y" translate --model "$M" --threads 1 --beam 2 --scores > "$O/stdin.out"
(cd "$O" && md5sum ./*.out)
