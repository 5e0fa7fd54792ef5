#!/usr/bin/env bash
# The example program of docs/storage.md: the copy in the document must be
# the compiled file, and the program must print what the document says.
#   check_example.sh PROGRAM SOURCE DOC
set -euo pipefail
prog=$1 src=$2 doc=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# the ```c block after the marker line
awk '/<!-- example: docs\/examples\/storage_example.c -->/ {m=1; next}
     m==1 && /^```c$/ {m=2; next}
     m==2 && /^```$/ {exit}
     m==2 {print}' "$doc" > "$dir/in_doc.c"
if ! diff -u "$src" "$dir/in_doc.c"; then
  echo "docs/storage.md's example differs from $src" >&2
  exit 1
fi
# the output the document shows after "It prints:"
awk '/^It prints:$/ {m=1; next}
     m==1 && /^```$/ {m=2; next}
     m==2 && /^```$/ {exit}
     m==2 {print}' "$doc" > "$dir/want.txt"
"$prog" "$dir/db" > "$dir/got.txt"
if ! diff -u "$dir/want.txt" "$dir/got.txt"; then
  echo "the example's output differs from docs/storage.md" >&2
  exit 1
fi
# the store it made is sound and private
if [ "$(stat -c %a "$dir/db")" != 700 ] || [ "$(stat -c %a "$dir/db/data.mdb")" != 600 ]; then
  echo "store permissions are not 0700/0600" >&2
  exit 1
fi
echo "example ok"
