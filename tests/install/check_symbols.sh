#!/usr/bin/env bash
# The shared library exports the public API and nothing else: the names of
# include/adstore.sym, which must also be exactly the functions the public
# headers declare. Fails naming each symbol that is exported but internal,
# listed but not exported, or declared but not listed (and the reverse).
#   check_symbols.sh LIBADSTORE.SO SOURCE-DIR PUBLIC-HEADER...
set -euo pipefail
lib=$1 src=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

grep '^ads_' "$src/include/adstore.sym" | sort > "$tmp/listed"
nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sed 's/@.*//' | sort -u > "$tmp/exported"
# functions the headers declare: preprocess, one declaration a line, keep the
# names called ads_*( outside typedefs; double-underscore names are not API
for h in "$@"; do printf '#include "%s"\n' "$h"; done > "$tmp/all.c"
cc -std=c11 -E -P -I"$src" "$tmp/all.c" | tr '\n' ' ' | sed 's/[;{}]/&\n/g' |
  grep -vE '^[[:space:]]*(typedef|static)' | grep -oE '\bads_[a-z0-9_]+[[:space:]]*\(' |
  sed 's/[[:space:]]*($//' | grep -v '__' | sort -u > "$tmp/declared"

status=0
report() { # report FILE-A FILE-B WHAT
  local extra
  extra=$(comm -23 "$1" "$2")
  if [ -n "$extra" ]; then
    echo "$3:"
    printf '  %s\n' $extra
    status=1
  fi
}
report "$tmp/exported" "$tmp/listed" "exported by $(basename "$lib") but not public (not in include/adstore.sym)"
report "$tmp/listed" "$tmp/exported" "in include/adstore.sym but not exported by $(basename "$lib")"
report "$tmp/declared" "$tmp/listed" "declared by the public headers but not in include/adstore.sym (add them)"
report "$tmp/listed" "$tmp/declared" "in include/adstore.sym but declared by no public header"
if [ "$status" = 0 ]; then
  echo "symbols ok: $(wc -l < "$tmp/listed") public functions exported, nothing else"
fi
exit "$status"
