#!/usr/bin/env bash
# Install the build tree into a temporary prefix and use it as a program's
# author would, with pkg-config alone: every installed <adstore/NAME.h>
# compiles on its own; docs/storage.md's example program and
# tests/install/example.c build against the shared library and, from a
# static-only copy of the prefix, against the static one; both run and print
# what the document says; the installed program, man page and completion are
# in place.
#   check_install.sh BUILD-DIR SOURCE-DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install check: $*" >&2; exit 1; }

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(sed -n 's/^libdir=${prefix}\///p' "$build/adstore.pc")
for f in bin/adstore "$libdir/libadstore.a" "$libdir/libadstore.so" "$libdir/pkgconfig/adstore.pc" \
         include/adstore/engine.h include/adstore/engine/engine.h include/adstore/base/error.h \
         share/man/man1/adstore.1 share/bash-completion/completions/adstore; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
internal=$(cd "$prefix/include" && find . -name '*_int.h')
[ -z "$internal" ] || fail "internal headers installed: $internal"

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
cflags=$(pkg-config --cflags adstore)
read -r -a words <<< "$cflags"
# one directory, the include root (the .pc is relocatable: compare real paths)
[ "${#words[@]}" = 1 ] && [ "${words[0]#-I}" != "${words[0]}" ] &&
  [ "$(readlink -f "${words[0]#-I}")" = "$(readlink -f "$prefix/include")" ] ||
  fail "pkg-config --cflags adstore gives '$cflags', not the one include root -I$prefix/include"

# every public header alone, by its installed name
for h in "$prefix"/include/adstore/*.h; do
  name=adstore/$(basename "$h")
  printf '#include <%s>\nint main(void) { return 0; }\n' "$name" > "$tmp/one.c"
  # shellcheck disable=SC2086
  cc -std=c11 -Wall -Wextra -Werror -pedantic $cflags -c "$tmp/one.c" -o "$tmp/one.o" ||
    fail "<$name> does not compile alone with pkg-config's flags"
done

# shared: the program must load the installed libadstore.so
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$src/docs/examples/storage_example.c" $(pkg-config --cflags --libs adstore) \
   -Wl,-rpath,"$prefix/$libdir" -o "$tmp/example_shared"
# (ldd's output is read whole first: 'ldd | grep -q' under pipefail fails
# whenever grep exits before ldd has written everything)
deps=$(ldd "$tmp/example_shared")
grep -qF "$prefix/$libdir/libadstore.so" <<< "$deps" ||
  fail "the example is not linked to the installed libadstore.so"
"$src/tests/install/check_example.sh" "$tmp/example_shared" "$src/docs/examples/storage_example.c" \
  "$src/docs/storage.md" >/dev/null

# static: a prefix holding only libadstore.a, linked with pkg-config --static
cp -a "$prefix" "$tmp/static"
rm -f "$tmp/static/$libdir"/libadstore.so*
export PKG_CONFIG_PATH=$tmp/static/$libdir/pkgconfig
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$src/docs/examples/storage_example.c" \
   $(pkg-config --cflags --libs --static adstore) -o "$tmp/example_static"
deps=$(ldd "$tmp/example_static")
if grep -q libadstore <<< "$deps"; then
  fail "the static example still needs libadstore.so"
fi
"$src/tests/install/check_example.sh" "$tmp/example_static" "$src/docs/examples/storage_example.c" \
  "$src/docs/storage.md" >/dev/null
# shellcheck disable=SC2046
cc -std=c11 -Wall -Werror "$src/tests/install/example.c" \
   $(pkg-config --cflags --libs --static adstore) -o "$tmp/ids"
out=$("$tmp/ids" "$tmp/store")
[ "$(printf '%s\n' "$out" | grep -c '^#[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}-1$')" = 3 ] ||
  fail "unexpected output from tests/install/example.c: $out"

[ "$("$prefix/bin/adstore" -d "$tmp/store" id new increment)" = '#1' ] ||
  fail "the installed adstore did not work"
echo "install check passed: headers alone, the example shared and static, the program"
