#!/usr/bin/env bash
# Opens an experiment report in headless Chromium and saves a screenshot, to check that the page
# shows its table and pictures without a server.
# Usage: scripts/screenshot-report.sh EXPERIMENT_DIR [OUT.png]   (installs Debian's chromium if missing)
set -euo pipefail
dir=$(cd "${1:?usage: $0 EXPERIMENT_DIR [OUT.png]}" && pwd)
out=${2:-$dir/report-screenshot.png}
[ -f "$dir/report.html" ] || { echo "$dir/report.html: not found (run yoke experiment first)" >&2; exit 1; }
if ! command -v chromium >/dev/null; then
  echo "installing chromium (Debian package)..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
fi
# --no-sandbox: root in a container; the page is local and trusted.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,3000 \
  --screenshot="$out" "file://$dir/report.html" 2>/dev/null
# The DOM as the browser built it: the table and every picture must be there.
dom=$(chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$dir/report.html" 2>/dev/null)
tables=$(grep -o '<table' <<<"$dom" | wc -l)
images=$(grep -o '<img' <<<"$dom" | wc -l)
echo "screenshot: $out ($tables table(s), $images picture(s) in the rendered page)"
[ "$tables" -ge 1 ] && [ "$images" -ge 1 ]
