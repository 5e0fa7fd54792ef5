#!/usr/bin/env bash
# docs/building.md against the source: its commands cannot run inside the
# suite (they build and test the whole tree), so what they rely on is
# checked instead. The scripts it names exist and are executable; its table
# of CMake options is exactly the option()s of CMakeLists.txt; its list of
# fuzz targets is exactly tests/fuzz/CMakeLists.txt's; every -D option of
# its commands is one of them; the suite tests it names exist.
#   check_building.sh SOURCE-DIR
set -uo pipefail
src=$1
doc=$src/docs/building.md
status=0
fail() { echo "docs/building.md: $*"; status=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for script in $(grep -o 'tools/[a-z_]*\.sh' "$doc" | sort -u); do
  [ -x "$src/$script" ] || fail "names $script, which is not an executable file"
done

sed -n 's/^option(\([A-Z_]*\) .*/\1/p' "$src/CMakeLists.txt" | sort > "$tmp/options"
sed -n 's/^| `\(ADS_[A-Z_]*\)` |.*/\1/p' "$doc" | sort > "$tmp/documented"
diff -u "$tmp/options" "$tmp/documented" > "$tmp/diff" ||
  fail "the CMake options table differs from CMakeLists.txt's option()s:
$(cat "$tmp/diff")"
for d in $(grep -o -- '-D[A-Z_]*=' "$doc" | sed 's/^-D//; s/=$//' | sort -u); do
  [ "$d" = CMAKE_BUILD_TYPE ] || [ "$d" = CMAKE_C_COMPILER ] || grep -qx "$d" "$tmp/options" ||
    fail "a command sets -D$d, which CMakeLists.txt does not define"
done

# set(ADS_FUZZ_TARGETS a b c\n d e) in tests/fuzz/CMakeLists.txt
sed -n '/^set(ADS_FUZZ_TARGETS/,/)/p' "$src/tests/fuzz/CMakeLists.txt" |
  sed 's/set(ADS_FUZZ_TARGETS//; s/)//' | tr -s ' \n' '\n\n' | sed '/^$/d' | sort > "$tmp/targets"
sed -n '/^## Fuzzing/,/^## /p' "$doc" | tr '\n' ' ' | sed 's/(`statement`:/(`statement`) (/' |
  grep -o '(`[a-z_]*`\(, `[a-z_]*`\)*)' | grep -o '`[a-z_]*`' | tr -d '`' | sort > "$tmp/fuzz_doc"
diff -u "$tmp/targets" "$tmp/fuzz_doc" > "$tmp/diff" ||
  fail "the fuzz targets differ from tests/fuzz/CMakeLists.txt's:
$(cat "$tmp/diff")"

for t in $(sed -n '/^## What the suite runs/,/^## /p' "$doc" | grep -o '^\* `[a-z_]*`' | tr -d '*` '); do
  page=${t#docs_}
  page=${page%_examples}
  # a test made per page by foreach(page ...) in tests/CMakeLists.txt
  if [ "docs_${page}_examples" = "$t" ] &&
    grep -qE "^foreach\(page( [a-z]+)* $page( [a-z]+)*\)" "$src/tests/CMakeLists.txt"; then
    continue
  fi
  grep -rqE "(ads_test\(|NAME )$t\b" "$src/tests" --include=CMakeLists.txt ||
    fail "names the test $t, which the suite does not have"
done
[ "$status" = 0 ] && echo "docs/building.md agrees with the source"
exit "$status"
