#!/usr/bin/env bash
# The web page at / in headless Chromium: it loads, runs a timeline query
# given as ?q=, and shows the rows as a table and as a line chart. The DOM
# after the page's script ran (--dump-dom) must hold the table's rows and
# one polyline per series; a screenshot must hold pixels of each series'
# colour (the chart was drawn, not only built).
#   check_page.sh ADSTORE
set -uo pipefail
ADSTORE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_env.sh"
require_tools curl python3 chromium
work=$(mktemp -d)
trap 'stop_server 2>/dev/null; rm -rf "$work"' EXIT
failures=0

fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

start_server "$work" || exit 1
U=$ADSTORE_URL
curl -s --data-binary 'STORE [ AdType = "Type"; ForType = "Host"; KeyAttributes = { "Name" } ]' "$U/api/query" > /dev/null
for r in 'Name = "a"; Memory = 100; Role = "compute"; _Timestamp = `2024-01-01T00:00:00Z`' \
         'Name = "c"; Memory = 50; Role = "login"; _Timestamp = `2024-01-01T00:10:00Z`' \
         'Name = "b"; Memory = 200; Role = "compute"; _Timestamp = `2024-01-01T00:20:00Z`' \
         'Name = "a"; Memory = 300; _Timestamp = `2024-01-01T01:00:00Z`'; do
  out=$(curl -s --data-binary "STORE [ AdType = \"Host\"; $r ]" "$U/api/query")
  [ "$out" = '{"statement":"store","rows":1,"unchanged":0}' ] || fail "storing: $out"
done
stmt='SELECT avg@(sum(Memory)) AS memory, Role FROM Host WHERE @timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`) GROUP BY Role, @intervals(`15m`)'
q=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$stmt")
browse() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$work/profile" --virtual-time-budget=10000 --window-size=900,800 \
    "$@" "$U/?q=$q" 2> "$work/chromium.log"
}
browse --dump-dom > "$work/dom.html" || fail "chromium --dump-dom failed: $(tail -3 "$work/chromium.log")"
grep -q 'id="status" class="">16 rows in ' "$work/dom.html" || fail "the status line does not say 16 rows"
rows=$(grep -o '<tr>' "$work/dom.html" | wc -l)
[ "$rows" = 17 ] || fail "the table has $rows rows, not a header and 16"
grep -q '<td>`2024-01-01T00:15:00Z`</td><td>233.33333333333334</td><td>compute</td>' "$work/dom.html" ||
  fail "the table lacks the 00:15 compute row"
lines=$(grep -o '<polyline[^>]*class="series"' "$work/dom.html" | wc -l)
[ "$lines" = 2 ] || fail "the chart has $lines lines, not 2 (compute and login)"
grep -q 'memory (compute)' "$work/dom.html" || fail "the chart's legend lacks 'memory (compute)'"

browse --screenshot="$work/shot.png" > /dev/null || fail "chromium --screenshot failed"
if [ -s "$work/shot.png" ]; then
  read -r blue red < <(python3 "$here/png_colors.py" "$work/shot.png" 1f77b4 d62728 | paste -sd' ')
  [ "${blue:-0}" -ge 200 ] || fail "the screenshot has ${blue:-0} pixels of the first line's colour"
  [ "${red:-0}" -ge 200 ] || fail "the screenshot has ${red:-0} pixels of the second line's colour"
else
  fail "no screenshot"
fi

stop_server TERM
[ "$SERVER_STATUS" = 0 ] || fail "serve exited $SERVER_STATUS"
[ "$failures" = 0 ] && echo "check_page: the page ran the query and drew the table and the chart"
[ "$failures" = 0 ]
