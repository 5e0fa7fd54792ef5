#!/usr/bin/env bash
# Install the build tree into a temporary prefix, build tests/install/example.c
# against it with pkg-config alone, run it, and check the installed program.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in bin/adstore include/adstore/idgen/idgen.h include/adstore/engine/engine.h \
         include/adstore/base/error.h lib/libadstore.a lib/pkgconfig/adstore.pc; do
  [ -e "$tmp/prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$src/tests/install/example.c" $(pkg-config --cflags --libs adstore) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/example"
out=$("$tmp/example" "$tmp/store")
[ "$(printf '%s\n' "$out" | grep -c '^#[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}-1$')" = 3 ] \
  || { echo "unexpected example output: $out"; exit 1; }
"$tmp/prefix/bin/adstore" -d "$tmp/store" id new increment | grep -qx '#1' \
  || { echo "installed adstore did not work"; exit 1; }
echo "install check passed: 3 ids from the example, installed adstore works"
