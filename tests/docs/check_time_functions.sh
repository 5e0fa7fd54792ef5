#!/usr/bin/env bash
# docs/classad.md's "### Time" table names exactly the functions of
# classad/builtins_time.c's table (ads_builtins__time), so the list of time
# functions the page gives cannot fall behind the code.
#   check_time_functions.sh SOURCE-DIR
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n '/^const ads_builtin ads_builtins__time\[\]/,/^};/p' "$src/classad/builtins_time.c" |
  sed -n 's/^ *{"\([A-Za-z]*\)",.*/\1/p' | sort -u > "$tmp/code"
# the function column of each table row: `name(...)` and bare `name`s
sed -n '/^### Time$/,/^### /p' "$src/docs/classad.md" | grep '^| `' | cut -d'|' -f2 |
  grep -o '`[A-Za-z]*[(`]' | tr -d '`(' | sort -u > "$tmp/doc"
[ -s "$tmp/code" ] || { echo "no time functions found in classad/builtins_time.c"; exit 1; }
if ! diff -u "$tmp/code" "$tmp/doc"; then
  echo "docs/classad.md's Time table (+) differs from classad/builtins_time.c (-)"
  exit 1
fi
echo "docs/classad.md lists the $(wc -l < "$tmp/code") time functions of classad/builtins_time.c"
