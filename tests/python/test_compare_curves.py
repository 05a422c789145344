#!/usr/bin/env python3
"""scripts/compare-curves.py on made-up curves whose answers are known by hand.

Two variants, three seeds each. 'a' converged (early stopping) at 2.0, 2.1, 2.2; 'b' was cut off
at 1.5, 1.6, 1.7 while still falling. A third case: runs that reached their budget, one flat and
one still falling, converged or not by the reports' slope rule. Every b below every a: the exact two-sided permutation p is
2 of the C(6,3) = 20 splits, 0.1, and since the cut-off side is the better one the gap can only
widen. Swapped (b cut off but worse), the same test decides nothing. Standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "compare-curves.py")


def write_run(root, variant, seed, values, reason):
    model = os.path.join(root, "runs", variant, f"seed{seed}", "model")
    os.makedirs(model)
    with open(os.path.join(model, "metrics.jsonl"), "w") as f:
        f.write(json.dumps({"config": {}}) + "\n")
        for i, v in enumerate(values, 1):
            f.write(json.dumps({"type": "valid", "update": 100 * i, "nll": v, "loss": v + 1}) + "\n")
        f.write(json.dumps({"type": "end", "reason": reason, "update": 100 * len(values)}) + "\n")


def compare(root, *extra):
    done = subprocess.run([sys.executable, SCRIPT, root, *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def main():
    with tempfile.TemporaryDirectory() as root:
        for seed, best in enumerate([2.0, 2.1, 2.2], 1):
            write_run(root, "a", seed, [3.0, best, best + 0.05, best + 0.04], "early stopping")
        for seed, last in enumerate([1.5, 1.6, 1.7], 1):
            write_run(root, "b", seed, [2.9, 2.5, last + 0.1, last], "interrupted")
        out = compare(root, "--baseline", "a")
        assert "common update 400" in out, out
        rows = [line.split() for line in out.splitlines() if len(line.split()) > 1 and line.split()[1].isdigit()]
        assert len(rows) == 6, out
        assert rows[0][:5] == ["a", "1", "2.0000", "200", "400"], rows[0]
        assert "converged" in out and "cut off (interrupted)" in out, out
        best = next(line for line in out.splitlines() if line.startswith("b - a, best"))
        assert "-0.5000" in best and "p = 0.1000" in best and "can only widen" in best, best
        at = next(line for line in out.splitlines() if line.startswith("b - a, at 400"))
        assert "-0.5400" in at, at  # a's last values (best + 0.04) average 2.14, b's 1.6
        # --at beyond a variant's last update leaves it out of that comparison.
        assert "b - a, at 500" not in compare(root, "--baseline", "a", "--at", "500")

    with tempfile.TemporaryDirectory() as root:
        for seed, best in enumerate([2.0, 2.1, 2.2], 1):
            write_run(root, "a", seed, [3.0, best], "early stopping")
        for seed, last in enumerate([2.5, 2.6, 2.7], 1):
            write_run(root, "b", seed, [2.9, last], "interrupted")
        best = next(line for line in compare(root, "--baseline", "a").splitlines() if line.startswith("b - a, best"))
        assert "+0.5000" in best and "decides nothing" in best, best
    # Runs that ended at their budget: converged by the reports' slope rule when the last five
    # losses are flat (a fall of 0.1% with small noise), cut off when they still fall 5%.
    with tempfile.TemporaryDirectory() as root:
        write_run(root, "a", 1, [3.0, 2.0, 2.001, 1.999, 2.0005, 1.998], "max_updates")
        write_run(root, "b", 1, [3.0, 2.5, 2.45, 2.4, 2.35, 2.3], "max_updates")
        rows = {line.split()[0]: line for line in compare(root).splitlines() if line.split()[1:2] == ["1"]}
        assert "converged (max_updates; slope rule" in rows["a"], rows["a"]
        assert "cut off (max_updates; slope rule: loss falls" in rows["b"], rows["b"]
    print("compare-curves: 3 cases passed")


if __name__ == "__main__":
    main()
