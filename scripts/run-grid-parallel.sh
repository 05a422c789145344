#!/usr/bin/env bash
# Runs each (variant, seed) of a grid as its own `yoke experiment --variants V --seeds S` process,
# several at once: one GPU trains many small models together (a d = 128 model keeps a GPU busy a
# small part of each step, kernel launches dominate), and on a CPU of 2 cores two one-thread runs
# use both. Run VARIANT, seed S goes into OUT/parts/VARIANT-sS (a one-run experiment; its log is
# OUT/parts/VARIANT-sS.log); runs start seed by seed, every variant of a seed before the next. When
# all have stopped, the finished runs are gathered into OUT/runs and OUT's report is written, its
# experiment.json the parts' record with every part's invocation, unless --no-report. A registered
# grid's parts must all hold the same registered design. The same command again resumes the runs
# that did not finish, from their checkpoints.
#
#   scripts/run-grid-parallel.sh --grid FILE --out DIR [--jobs N] [--seconds S] [--set KEY=VALUE ...]
#                                [--resume-from EXPORT] [--no-report | --report-only]
#     --jobs N      processes at once (default: every run of the grid)
#     --seconds S   interrupt every run still going S seconds after the start (SIGINT: it saves a
#                   checkpoint and the same command resumes it)
#     --set         config override for every run, as for `yoke experiment`
#     --report-only gather and report, run nothing (OUT/parts brought back from a GPU machine)
#     --resume-from EXPORT  first fill OUT/parts with the finished runs of EXPORT, this grid's folder
#                   committed by `yoke report --export` (no checkpoints): a fresh clone or another
#                   machine then runs only what EXPORT lacks (a run EXPORT holds unfinished starts over)
# The grid must list its seeds (`seeds = 1 2 3`); `seeds = auto` adds seeds one at a time, which
# `yoke experiment` alone does. Environment: YOKE (default build/yoke).
set -euo pipefail
cd "$(dirname "$0")/.."

grid="" out="" jobs=0 seconds=0 report=1 run=1 sets=() resume_from=
while [ $# -gt 0 ]; do
  case "$1" in
    --grid) grid="$2"; shift ;;
    --out) out="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --seconds) seconds="$2"; shift ;;
    --set) sets+=(--set "$2"); shift ;;
    --no-report) report=0 ;;
    --report-only) run=0 ;;
    --resume-from) resume_from="$2"; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "run-grid-parallel: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$grid" ] && [ -n "$out" ] || { echo "run-grid-parallel: --grid and --out are required (see --help)" >&2; exit 2; }
[ -f "$grid" ] || { echo "run-grid-parallel: $grid: no such grid file" >&2; exit 2; }
yoke=${YOKE:-build/yoke}
[ -x "$yoke" ] || { echo "run-grid-parallel: $yoke: not built" >&2; exit 1; }

seed_line=$(grep -nE '^[[:space:]]*seeds[[:space:]]*=' "$grid" | head -1) || true
seeds=$(sed -E 's/^[0-9]+:[[:space:]]*seeds[[:space:]]*=[[:space:]]*//; s/[[:space:]]*#.*$//' <<<"$seed_line")
if [ -z "$seeds" ] || ! [[ "$seeds" =~ ^[0-9\ ]+$ ]]; then
  echo "run-grid-parallel: $grid: seeds must be a list of numbers here (it says '${seeds:-nothing}')" >&2
  exit 2
fi
mapfile -t variants < <(sed -nE 's/^[[:space:]]*\[variant[[:space:]]+([^]]+)\][[:space:]]*$/\1/p' "$grid")
[ ${#variants[@]} -gt 0 ] || { echo "run-grid-parallel: $grid: no [variant NAME] sections" >&2; exit 2; }

mkdir -p "$out/parts"
if [ -n "$resume_from" ]; then
  # Each finished run of the export becomes its own part again: its files, and the export's record
  # narrowed to that part's own calls (the calls of runs the export does not hold finished are left
  # out: those runs start over). A part OUT already holds finished is kept as it is.
  python3 - "$resume_from" "$out" "$grid" <<'PY'
import json, os, shutil, sys
export, out, grid = sys.argv[1:4]
path = os.path.join(export, "experiment.json")
if not os.path.isfile(path):
    sys.exit(f"run-grid-parallel: --resume-from {export}: no experiment.json (a folder of `yoke report --export`)")
record = json.load(open(path))
if os.path.realpath(record.get("grid", {}).get("path", "")) != os.path.realpath(grid):
    sys.exit(f"run-grid-parallel: --resume-from {export}: its runs are of the grid {record.get('grid', {}).get('path')}, not {grid}")
def part_of(command):
    # the part a call ran: the last folder of its --out, when that lies in a parts/ folder
    words = command.split()
    for i, word in enumerate(words[:-1]):
        if word == "--out" and os.path.basename(os.path.dirname(words[i + 1].rstrip("/"))) == "parts":
            return os.path.basename(words[i + 1].rstrip("/"))
    return None
taken = 0
for v in record["variants"]:
    for s in record["seeds"]:
        run = os.path.join(export, "runs", v, f"seed{s}")
        part = os.path.join(out, "parts", f"{v}-s{s}")
        if not os.path.isfile(os.path.join(run, "result.json")) or \
           os.path.isfile(os.path.join(part, "runs", v, f"seed{s}", "result.json")):
            continue
        if os.path.exists(part):
            shutil.rmtree(part)  # an unfinished run of OUT's own: the export's finished one replaces it
        shutil.copytree(run, os.path.join(part, "runs", v, f"seed{s}"))
        own = dict(record, variants=[v], seeds=[s], baseline=v)
        own["invocations"] = [c for c in record.get("invocations", []) if part_of(c["command"]) == f"{v}-s{s}"]
        record_path = os.path.join(part, "experiment.json")
        with open(record_path + ".tmp", "w") as f:  # as the gathered record below: whole or not at all
            json.dump(own, f, indent=2)
        os.replace(record_path + ".tmp", record_path)
        taken += 1
print(f"run-grid-parallel: {taken} finished runs taken from {export}", file=sys.stderr)
PY
fi
start=$(date +%s)
running=0 launched=0
for s in $seeds; do
  for v in "${variants[@]}"; do
    [ "$run" = 1 ] || continue
    if [ "$jobs" -gt 0 ] && [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
    limit=()
    if [ "$seconds" -gt 0 ]; then
      left=$((seconds - ($(date +%s) - start)))
      [ "$left" -gt 0 ] || { echo "run-grid-parallel: $seconds s are up; $v seed $s not started" >&2; continue; }
      limit=(timeout -s INT -k 60 "$left")
    fi
    part="$out/parts/$v-s$s"
    # The part's own finished run is skipped by its experiment: nothing to start.
    [ -f "$part/runs/$v/seed$s/result.json" ] && continue
    "${limit[@]}" "$yoke" experiment --grid "$grid" --variants "$v" --seeds "$s" --out "$part" "${sets[@]}" \
      >> "$part.log" 2>&1 &
    running=$((running + 1)) launched=$((launched + 1))
  done
done
echo "run-grid-parallel: $launched runs started (${#variants[@]} variants × seeds $seeds)" >&2
wait || true

finished=0 unfinished=()
for s in $seeds; do
  for v in "${variants[@]}"; do
    run="$out/parts/$v-s$s/runs/$v/seed$s"
    if [ -f "$run/result.json" ]; then
      mkdir -p "$out/runs/$v"
      rm -rf "$out/runs/$v/seed$s"
      cp -al "$run" "$out/runs/$v/seed$s"  # hard links: checkpoints are not copied
      finished=$((finished + 1))
    else
      unfinished+=("$v seed $s")
    fi
  done
done
echo "run-grid-parallel: $finished runs finished, $(( $(date +%s) - start )) s" >&2
[ ${#unfinished[@]} -eq 0 ] || printf '  not finished: %s (the same command resumes it)\n' "${unfinished[@]}" >&2
if [ "$report" = 1 ] && [ "$finished" -gt 0 ]; then
  # OUT's record is the parts' (the runs were made by their calls: machine, commit, start), with
  # every variant and seed of the grid and every part's invocation; a registered design must be the
  # same in every part, and is dated by the earliest part's record. The baseline is the grid's: a
  # part runs one variant, which its own record names as the baseline.
  python3 - "$out" "$grid" "$seeds" "${variants[@]}" <<'PY'
import glob, json, os, sys
out, grid, seeds, variants = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split()], sys.argv[4:]
def grid_baseline():
    section = None
    for line in open(grid, encoding="utf-8"):
        text = line.split("#", 1)[0].strip()
        if text.startswith("["):
            section = text
        elif section == "[grid]" and "=" in text and text.split("=", 1)[0].strip() == "baseline":
            return text.split("=", 1)[1].strip()
    return variants[0]  # the grid's default (experiment/grid.h)
parts = sorted(glob.glob(os.path.join(out, "parts", "*", "experiment.json")))
records = [json.load(open(p)) for p in parts]
record = dict(records[0])
record["variants"], record["seeds"], record["invocations"] = variants, seeds, []
record["baseline"] = grid_baseline()
record["expected"] = {k: v for r in records for k, v in r.get("expected", {}).items()}
designs = {json.dumps(r.get("registration", {}).get("design"), sort_keys=True) for r in records}
if len(designs) > 1:
    sys.exit("run-grid-parallel: the parts hold different registered designs: " + ", ".join(parts))
if "registration" in record:
    record["registration"]["recorded"] = min((r["registration"]["recorded"] for r in records), key=lambda d: d["date"])
for r in records:
    for call in r.get("invocations", []):
        if call not in record["invocations"]:
            record["invocations"].append(call)
path = os.path.join(out, "experiment.json")
json.dump(record, open(path + ".tmp", "w"), indent=2)
os.replace(path + ".tmp", path)
PY
  "$yoke" report "$out"
fi
