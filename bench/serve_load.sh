#!/usr/bin/env bash
# Load test of `yoke serve` on loopback (127.0.0.1 only): starts the server on a free port, sends
# a bounded number of requests from concurrent connections (bench/serve_load.py), twice (RUNS=N: N times) — the
# second run shows whether the server's memory stays flat —, then stops it with SIGTERM.
#   bash bench/serve_load.sh MODEL_DIR SOURCE_FILE [REQUESTS] [CONNECTIONS] [BEAM]
set -euo pipefail
MODEL=${1:?model directory}; SRC=${2:?source sentences}; REQUESTS=${3:-3000}; CONNECTIONS=${4:-32}; BEAM=${5:-5}
HERE=$(cd "$(dirname "$0")" && pwd); YOKE=${YOKE:-$HERE/../build/yoke}
LOG=$(mktemp); trap 'rm -f "$LOG"' EXIT
"$YOKE" serve --model "$MODEL" --port 0 ${THREADS:+--threads $THREADS} 2>"$LOG" &
PID=$!
trap 'kill -TERM $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 600); do grep -q "listening on" "$LOG" && break; kill -0 $PID 2>/dev/null || { cat "$LOG"; exit 1; }; sleep 0.1; done
PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$LOG" | cut -d: -f2)
echo "yoke serve pid $PID port $PORT; $REQUESTS requests × ${RUNS:-2} from $CONNECTIONS connections, beam $BEAM"
for run in $(seq "${RUNS:-2}"); do
  echo "--- run $run"
  python3 "$HERE/serve_load.py" --port "$PORT" --input "$SRC" --requests "$REQUESTS" --connections "$CONNECTIONS" \
      --beam "$BEAM" --pid "$PID"
done
curl -s "127.0.0.1:$PORT/metrics" 2>/dev/null | grep -E "^yoke_(batches|batched_sentences)_total" || true
kill -TERM $PID; wait $PID; echo "server exit code $?"
