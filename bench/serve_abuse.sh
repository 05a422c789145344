#!/usr/bin/env bash
# The abuse probes of bench/serve_abuse.py against `yoke serve` on loopback (127.0.0.1 only): starts
# the server on a free port with its default limits, runs the probes, stops it with SIGTERM.
#   bash bench/serve_abuse.sh MODEL_DIR [serve_abuse.py options, e.g. --probes crowd --clients 200]
set -euo pipefail
MODEL=${1:?model directory}; shift
HERE=$(cd "$(dirname "$0")" && pwd); YOKE=${YOKE:-$HERE/../build/yoke}
LOG=$(mktemp); trap 'rm -f "$LOG"' EXIT
"$YOKE" serve --model "$MODEL" --port 0 ${THREADS:+--threads $THREADS} ${SERVE_ARGS:-} 2>"$LOG" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 600); do grep -q "listening on" "$LOG" && break; kill -0 $PID 2>/dev/null || { cat "$LOG"; exit 1; }; sleep 0.1; done
PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$LOG" | cut -d: -f2)
echo "yoke serve pid $PID port $PORT"
STATUS=0
python3 "$HERE/serve_abuse.py" --port "$PORT" --pid "$PID" "$@" || STATUS=$?
kill -TERM $PID; wait $PID || { echo "server exit code $?"; STATUS=1; }
grep -iE "error|backtrace" "$LOG" && STATUS=1
exit $STATUS
