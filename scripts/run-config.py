#!/usr/bin/env python3
"""A trained model's config as `key = value` lines (what `yoke train --config` reads), from the
`start` record of its metrics.jsonl: to train the same model again, e.g. for a speed comparison
(bench/side_by_side.sh) or its initial weights (scripts/norms-over-training.sh).
Usage: scripts/run-config.py MODEL_DIR/metrics.jsonl > model.conf"""
import json, sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
for line in open(sys.argv[1]):
    record = json.loads(line)
    if record.get("type") == "start":
        for key, value in record["config"].items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            print(f"{key} = {value}")
        break
else:
    sys.exit(f"{sys.argv[1]}: no start record")
