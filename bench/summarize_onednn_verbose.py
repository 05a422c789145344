#!/usr/bin/env python3
"""Where oneDNN's products spend a run's time: per weight shape and per band of row counts, the
calls, milliseconds and GFLOP/s, from oneDNN's own timing of each call.

    ONEDNN_VERBOSE=1 build/yoke translate --model M --input IN --beam 4 --threads 1 --workers 1 \
        >verbose.txt 2>/dev/null    # the translations go to stdout with the log lines: not for use
    python3 bench/summarize_onednn_verbose.py verbose.txt

oneDNN prints one `onednn_verbose,exec,...` line per call with its problem (MxK:KxN:MxN) and its
time in ms. In a decoding step every product of the step has the step's row count M (beam ×
sentences still going), so the calls of the output matrix (K × V) count the steps and their rows.
The verbose lines cost time themselves: compare the bands with each other, not with a plain run.
"""
import collections
import sys

BANDS = (1, 8, 20, 40, 80, 120, 160)  # a band holds M from its bound up to the next


def band(m):
    return max(b for b in BANDS if b <= m)


def main(path):
    ms = collections.defaultdict(float)
    flop = collections.defaultdict(float)
    calls = collections.Counter()
    other_ms = collections.defaultdict(float)
    for line in open(path, encoding="utf-8", errors="replace"):
        if not line.startswith("onednn_verbose,exec,"):
            continue
        f = line.rstrip("\n").split(",")
        kind, problem, t = f[3], f[-2], float(f[-1])
        if kind != "matmul":
            other_ms[kind] += t
            continue
        a, b, _ = problem.split(":")
        m, k = (int(x) for x in a.split("x")[-2:])
        n = int(b.split("x")[-1])
        key = (f"{k}x{n}", band(m))
        ms[key] += t
        flop[key] += 2.0 * m * k * n
        calls[key] += 1
    if not ms:
        sys.exit(f"{path}: no `onednn_verbose,exec` matmul lines (was ONEDNN_VERBOSE=1 set?)")
    total = sum(ms.values())
    print(f"products: {total:.0f} ms in {sum(calls.values())} calls; other primitives: "
          + (", ".join(f"{k} {v:.0f} ms" for k, v in sorted(other_ms.items())) or "none"))
    print("| K × N | rows | calls | ms | share | GFLOP/s |")
    print("| :--- | :--- | ---: | ---: | ---: | ---: |")
    shapes = sorted({s for s, _ in ms}, key=lambda s: -sum(v for (x, _), v in ms.items() if x == s))
    for s in shapes:
        bands = sorted(b for x, b in ms if x == s)
        for b in bands + ["all"]:
            keys = [(s, b)] if b != "all" else [(s, x) for x in bands]
            t = sum(ms[x] for x in keys)
            label = "all" if b == "all" else f"{b}–{BANDS[BANDS.index(b) + 1] - 1}" if b != BANDS[-1] else f"{b}+"
            print(f"| {s} | {label} | {sum(calls[x] for x in keys)} | {t:.0f} | {100 * t / total:.1f}% | "
                  f"{sum(flop[x] for x in keys) / t / 1e6:.0f} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: summarize_onednn_verbose.py VERBOSE_LOG")
    main(sys.argv[1])
