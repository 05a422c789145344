#!/usr/bin/env bash
# Opens an experiment report in headless Chromium at a screen's width, saves a screenshot, and
# checks that the page shows its tables and pictures without a server and that its main table
# fits the width (no horizontal scrolling).
# Usage: scripts/screenshot-report.sh EXPERIMENT_DIR [OUT.png] [WIDTH]
#        (WIDTH: default 1280 pixels; installs Debian's chromium if missing)
set -euo pipefail
dir=$(cd "${1:?usage: $0 EXPERIMENT_DIR [OUT.png] [WIDTH]}" && pwd)
out=${2:-$dir/report-screenshot.png}
width=${3:-1280}
[ -f "$dir/report.html" ] || { echo "$dir/report.html: not found (run yoke experiment first)" >&2; exit 1; }
if ! command -v chromium >/dev/null; then
  echo "installing chromium (Debian package)..." >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
fi
# --no-sandbox: root in a container; the page is local and trusted.
browser=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$width,3000")
"${browser[@]}" --screenshot="$out" "file://$dir/report.html" 2>/dev/null
# The report has no script of its own: a copy beside it gets one that writes the laid-out widths
# into the DOM, which --dump-dom prints once the page has loaded.
probe=$(mktemp "$dir/.report-probe-XXXXXX.html")
trap 'rm -f "$probe"' EXIT
sed 's|</body>|<script>const t = document.querySelector("table"); document.body.dataset.tableRight = Math.ceil(t.getBoundingClientRect().right); document.body.dataset.pageWidth = document.documentElement.scrollWidth;</script></body>|' \
  "$dir/report.html" >"$probe"
dom=$("${browser[@]}" --dump-dom "file://$probe" 2>/dev/null)
tables=$(grep -o '<table' <<<"$dom" | wc -l)
images=$(grep -o '<img' <<<"$dom" | wc -l)
table_right=$(grep -o 'data-table-right="[0-9]*"' <<<"$dom" | grep -o '[0-9]*')
page_width=$(grep -o 'data-page-width="[0-9]*"' <<<"$dom" | grep -o '[0-9]*')
echo "screenshot: $out ($tables table(s), $images picture(s); at $width px the main table ends at ${table_right:-?} px, the page is ${page_width:-?} px wide)"
[ "$tables" -ge 1 ] && [ "$images" -ge 1 ] && [ -n "$table_right" ] && [ "$table_right" -le "$width" ] && [ "$page_width" -le "$width" ]
