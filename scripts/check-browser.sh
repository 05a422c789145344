#!/usr/bin/env bash
# Checks web/index.html in headless Chromium: serves the page and an exported ONNX model
# (`yoke export --format onnx`) from 127.0.0.1, types a sentence, and saves a screenshot of its
# translation. Not part of scripts/test.sh (Chromium is large); run it by hand:
#   scripts/check-browser.sh ONNX_DIR [SENTENCE] [SCREENSHOT.png]
# Needs Debian's chromium and node; installs web/node_modules (onnxruntime-web, playwright-core).
set -euo pipefail
cd "$(dirname "$0")/.."
model=$(realpath "${1:?usage: scripts/check-browser.sh ONNX_DIR [SENTENCE] [SCREENSHOT.png]}")
sentence=${2:-A man in a blue shirt is riding a bicycle.}
shot=$(realpath -m "${3:-web-check.png}")
[ -x /usr/bin/chromium ] || { echo "no /usr/bin/chromium (Debian: apt-get install chromium)" >&2; exit 1; }
[ -d web/node_modules/playwright-core ] || (cd web && npm ci --no-audit --no-fund >&2)
# The served root: the page, js/ and the model side by side (links), nothing else of this machine.
root=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$root"' EXIT
ln -s "$PWD/web" "$root/web"
ln -s "$PWD/js" "$root/js"
ln -s "$model" "$root/model"
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/usr/bin/python3 -m http.server "$port" --bind 127.0.0.1 --directory "$root" >"$root/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/web/index.html')" 2>/dev/null && break; sleep 0.1; done
result=$(node web/check.js "http://127.0.0.1:$port/web/index.html?model=../model" "$sentence" "$shot")
echo "$result"
echo "screenshot: $shot" >&2
# The page's beam-4 translation against node's (js/translate.js, onnxruntime-node) of the same sentence.
if [ -d js/node_modules/onnxruntime-node ]; then
  expected=$(printf '%s\n' "$sentence" | node js/translate.js "$model" --beam 4 2>/dev/null)
  got=$(printf '%s' "$result" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["output"])')
  if [ "$got" = "$expected" ]; then echo "same as onnxruntime-node's beam 4" >&2
  else echo "differs from onnxruntime-node's beam 4: $expected" >&2; exit 1; fi
fi
