#!/usr/bin/env python3
"""Writes a parallel corpus of N pairs built from Multi30k, for bench/data_scaling.sh.

Each line joins two random Multi30k pairs (so lines are about as long as WMT news: ~130 bytes
against Multi30k's ~65), and each word is misspelt with probability --mutate (a letter inserted),
which gives the long tail of rare word forms a web-scale corpus has; otherwise Multi30k's 10k
word types would make the vocabulary and the encoder's word cache unrealistically easy. The same
seed gives the same files.

  python3 bench/make_corpus.py --pairs 4500000 --src en --tgt de --out /tmp/corpus
"""
import argparse
import gzip
import os
import random
import string


def read(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def mutate(words, p, rng):
    out = []
    for w in words:
        if rng.random() < p:
            i = rng.randrange(len(w) + 1)
            w = w[:i] + rng.choice(string.ascii_lowercase) + w[i:]
        out.append(w)
    return " ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, required=True)
    ap.add_argument("--src", default="en")
    ap.add_argument("--tgt", default="de")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "multi30k"))
    ap.add_argument("--mutate", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="directory: writes train.SRC and train.TGT")
    a = ap.parse_args()
    src = read(os.path.join(a.data, f"train.{a.src}.gz"))
    tgt = read(os.path.join(a.data, f"train.{a.tgt}.gz"))
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    n = len(src)
    with open(os.path.join(a.out, f"train.{a.src}"), "w", encoding="utf-8") as fs, \
            open(os.path.join(a.out, f"train.{a.tgt}"), "w", encoding="utf-8") as ft:
        for _ in range(a.pairs):
            i, j = rng.randrange(n), rng.randrange(n)
            fs.write(mutate((src[i] + " " + src[j]).split(), a.mutate, rng) + "\n")
            ft.write(mutate((tgt[i] + " " + tgt[j]).split(), a.mutate, rng) + "\n")


if __name__ == "__main__":
    main()
