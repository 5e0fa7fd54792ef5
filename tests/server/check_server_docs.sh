#!/usr/bin/env bash
# Run the examples of docs/server.md against a live server and compare what
# they print with what the page shows. The server is started on a free
# loopback port with a tokens file holding a write token ($TOKEN) and a
# read-only one ($READ_TOKEN); $ADSTORE_URL is its address. An example is a
# fenced block whose first line starts with "$ ": each "$ COMMAND" line runs
# in bash in one scratch directory, in order, and the lines up to the next
# "$ " are its output (standard output and error together). "$ cat FILE" of
# a file not there yet creates it from the lines shown. Before comparing,
# both sides have what differs at every run replaced: times from the clock
# (2025 and later), uptimes, and the scratch directory.
#   check_server_docs.sh ADSTORE DOC [--print]
set -uo pipefail
ADSTORE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
doc=$2
print=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/server_env.sh"
require_tools curl
work=$(mktemp -d)
trap 'stop_server; rm -rf "$work"' EXIT
export TOKEN READ_TOKEN
TOKEN=$("$ADSTORE" serve --tokens "$work/tokens" --add-token docs-writer --role write 2>/dev/null)
READ_TOKEN=$("$ADSTORE" serve --tokens "$work/tokens" --add-token docs-reader --role read 2>/dev/null)
start_server "$work" --tokens "$work/tokens" || exit 1
mkdir -p "$work/run"
failures=0 ran=0

normalize() {
  sed -E -e 's/\r$//' \
    -e 's/\b20(2[5-9]|[3-9][0-9])-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/<time>/g' \
    -e 's/"uptime_seconds":[0-9.]+/"uptime_seconds":<n>/g' \
    -e "s#$work/run#<dir>#g"
}

run_one() {
  local line=$1 cmd=$2
  if [[ $cmd =~ ^cat\ ([A-Za-z0-9._/-]+)$ ]] && [ ! -e "$work/run/${BASH_REMATCH[1]}" ]; then
    cp "$work/want" "$work/run/${BASH_REMATCH[1]}"
  fi
  (cd "$work/run" && PATH="$(dirname "$ADSTORE"):$PATH" bash -c "$cmd") > "$work/got" 2>&1
  ran=$((ran + 1))
  if [ -n "$print" ]; then
    echo "\$ $cmd"
    cat "$work/got"
    return
  fi
  normalize < "$work/want" > "$work/want.n"
  normalize < "$work/got" > "$work/got.n"
  if ! diff -u "$work/want.n" "$work/got.n" > "$work/diff"; then
    echo "$doc:$line: \$ $cmd"
    sed 's/^/  /' "$work/diff"
    failures=$((failures + 1))
  fi
}

in_block=0 transcript=0 cmd="" cmd_line=0 n=0
: > "$work/want"
while IFS= read -r text || [ -n "$text" ]; do
  n=$((n + 1))
  if [[ $text == '```'* ]]; then
    if [ "$in_block" = 1 ] && [ -n "$cmd" ]; then
      run_one "$cmd_line" "$cmd"
    fi
    in_block=$((1 - in_block)) transcript=-1 cmd=""
    : > "$work/want"
    continue
  fi
  [ "$in_block" = 1 ] || continue
  if [ "$transcript" = -1 ]; then # the block's first line says what it is
    if [[ $text == '$ '* ]]; then transcript=1; else transcript=0; fi
  fi
  [ "$transcript" = 1 ] || continue
  if [[ $text == '$ '* ]]; then
    [ -n "$cmd" ] && run_one "$cmd_line" "$cmd"
    cmd=${text#\$ } cmd_line=$n
    : > "$work/want"
  else
    printf '%s\n' "$text" >> "$work/want"
  fi
done < "$doc"

if [ "$ran" = 0 ]; then
  echo "$doc: no examples found"
  exit 1
fi
echo "$doc: $ran examples, $failures failed"
[ "$failures" = 0 ]
