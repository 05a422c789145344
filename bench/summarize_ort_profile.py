#!/usr/bin/env python3
"""Where ONNX Runtime's time goes: sums an ORT profile (js/translate.js --ort-profile PREFIX writes
PREFIX-encoder_*.json and PREFIX-decoder_*.json) by operator type, and counts the session runs.

    python3 bench/summarize_ort_profile.py PROFILE.json [...]
"""
import collections
import json
import sys

for path in sys.argv[1:]:
    events = json.load(open(path))
    by_op, runs, run_us = collections.Counter(), 0, 0
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            by_op[e["args"].get("op_name", "?")] += e["dur"]
        elif e.get("cat") == "Session" and e["name"] == "model_run":
            runs += 1
            run_us += e["dur"]
    ops = sum(by_op.values())
    print(f"{path}: {runs} runs, {run_us / 1e6:.2f} s in model_run, {ops / 1e6:.2f} s in kernels")
    for op, us in by_op.most_common(12):
        print(f"  {op:28s} {us / 1e6:7.3f} s  {100 * us / max(ops, 1):5.1f}%")
