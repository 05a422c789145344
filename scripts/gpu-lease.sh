#!/usr/bin/env bash
# One short GPU lease of a grid (the device machine: 15 minutes in all, at most 10 a command, bare
# each time, files back only through $OUT): builds build-gpu/yoke, starts
# scripts/run-grid-parallel.sh detached (setsid, so a second command of the same lease finds it
# still training), waits, then packs what the runs wrote, without checkpoints or vocabularies,
# into $OUT/parts.tgz (unpack it here and run run-grid-parallel.sh --report-only).
#
#   scripts/gpu-lease.sh start UNTIL --grid FILE --out DIR [--jobs N] [--debs DIR] [--set K=V ...]
#   scripts/gpu-lease.sh wait UNTIL --out DIR        a later command of the same lease
#     UNTIL   seconds after this command's start at which it packs and returns (earlier when
#             no run is left); leave the command's timeout a minute beyond it
#     --debs  the .deb files of `scripts/gpu-build.sh --fetch-debs DIR`, carried to the machine
# Environment: OUT (the device tool's), YOKE (skip the build and use this binary: a test here).
# A run still going when the lease ends is lost with its checkpoints: a later lease starts it again.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
mode=${1:-} until=${2:-}
[[ "$mode" =~ ^(start|wait)$ && "$until" =~ ^[0-9]+$ ]] || { sed -n '2,16p' "$0" >&2; exit 2; }
shift 2
grid="" out="" jobs=10 debs="" sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --grid) grid="$2"; shift ;;
    --out) out="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --debs) debs="$2"; shift ;;
    --set) sets+=(--set "$2"); shift ;;
    *) echo "gpu-lease: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$out" ] && [ -n "${OUT:-}" ] || { echo "gpu-lease: --out and the environment's OUT are required" >&2; exit 2; }

if [ "$mode" = start ]; then
  [ -n "$grid" ] || { echo "gpu-lease: start needs --grid" >&2; exit 2; }
  nvidia-smi -L 2>/dev/null || true
  yoke=${YOKE:-}
  if [ -z "$yoke" ]; then
    yoke=build-gpu/yoke
    scripts/gpu-build.sh ${debs:+--debs "$debs"} --target yoke --target yoke_spm > "$OUT/build.log" 2>&1 ||
      { tail -60 "$OUT/build.log"; exit 1; }
    export LD_LIBRARY_PATH="$PWD/build-gpu/prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  echo "gpu-lease: $yoke ready at $(( $(date +%s) - t0 )) s; $(nproc) cores"
  mkdir -p "$out"
  YOKE=$yoke setsid nohup scripts/run-grid-parallel.sh --grid "$grid" --out "$out" --jobs "$jobs" \
    --seconds 3600 --no-report "${sets[@]}" > "$out/lease.log" 2>&1 < /dev/null &
  sleep 5
fi

while [ $(( $(date +%s) - t0 )) -lt "$until" ] && pgrep -f "run-grid-parallel.sh --grid .* --out $out" > /dev/null; do
  sleep 5
done
echo "gpu-lease: at $(( $(date +%s) - t0 )) s, each run's last validation:"
for log in "$out"/parts/*.log; do
  [ -f "$log" ] || continue
  printf '  %-24s %s\n' "$(basename "$log" .log)" "$(grep -aoE 'update [0-9]+ \| loss [0-9.]+' "$log" | tail -1)"
done
echo "gpu-lease: $(find "$out/parts" -name result.json 2>/dev/null | wc -l) runs finished"
nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv,noheader 2>/dev/null || true
tar czf "$OUT/parts.tgz" --exclude='*.ykp' --exclude='spm.*' --exclude=yoke.lock "$out" 2>/dev/null || true
ls -l "$OUT/parts.tgz"
