#!/usr/bin/env python3
"""Ranks the LibTorch operators of a trace (yoke_bench_decode --trace FILE) by their own time: an
operator's time less that of the operators it called, summed over its calls, as a share of the
trace's span. yoke's own kernels (attention, int8 and packed products, the search) call no
operator, so the span less the operators' total is theirs.

    python3 bench/summarize_torch_trace.py TRACE.json [--top N]
"""
import argparse
import collections
import json


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    events = [e for e in json.load(open(args.trace)) if e.get("ph") == "X"]
    if not events:
        raise SystemExit(f"{args.trace}: no operator events")
    events.sort(key=lambda e: (e["ts"], -e["dur"]))  # a caller before the operators it called
    own, calls = collections.Counter(), collections.Counter()
    stack, top_level = [], 0.0
    for e in events:
        while stack and stack[-1][1] <= e["ts"]:
            stack.pop()
        if stack:
            own[stack[-1][0]] -= e["dur"]
        else:
            top_level += e["dur"]
        own[e["name"]] += e["dur"]
        calls[e["name"]] += 1
        stack.append((e["name"], e["ts"] + e["dur"]))
    span = max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)
    print(f"span {span / 1e3:.1f} ms; LibTorch operators {top_level / 1e3:.1f} ms ({100 * top_level / span:.1f}%), "
          f"the rest {100 * (1 - top_level / span):.1f}%")
    print(f"{'operator':<32} {'own ms':>9} {'share':>7} {'calls':>8} {'us/call':>8}")
    for name, t in own.most_common(args.top):
        print(f"{name:<32} {t / 1e3:9.1f} {100 * t / span:6.1f}% {calls[name]:8d} {t / calls[name]:8.2f}")


if __name__ == "__main__":
    main()
