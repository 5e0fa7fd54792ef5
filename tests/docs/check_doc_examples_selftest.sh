#!/usr/bin/env bash
# check_doc_examples.sh checked on pages made for it: examples that hold pass
# (here-documents, "> " continuations, exports, [exit N], the normalized
# clock times), and each one that does not hold is named by page and line:
# wrong output, a wrong exit status, a fixed (pre-2025) time that differs;
# an export ends with its page.
# A page without examples fails too.
#   check_doc_examples_selftest.sh ADSTORE
set -uo pipefail
prog=$1
check=$(dirname "$0")/check_doc_examples.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

cat > "$tmp/page.md" <<'PAGE'
# a page

```
$ export GREETING=hello
$ cat in.txt
one
two
$ wc -l < in.txt
2
$ echo "$GREETING" &&
>   adstore eval '1 + 1'
hello
2
$ cat <<'END'
a here-document
END
a here-document
$ adstore eval 'now()'
`2031-05-06T07:08:09.123Z`
$ adstore eval 'absTime("2024-01-01T00:00:00Z")'
`2024-01-01T00:00:00Z`
$ adstore eval '1 +' 2> /dev/null
[exit 1]
```

The examples that do not hold, each marked "# wrong":

```
$ adstore eval '2 + 2'   # wrong
5
$ adstore eval '3'   # wrong
3
[exit 1]
$ adstore eval 'absTime("2024-01-01T00:00:00Z")'   # wrong
`2024-01-02T00:00:00Z`
```

Not an example:

```
adstore eval 'this block is only shown' && exit 1
```
PAGE
# a second page, run after the first: exports do not carry over
printf '```\n$ echo "[$GREETING]"\n[]\n```\n' > "$tmp/second.md"
out=$("$check" "$prog" "$tmp/page.md" "$tmp/second.md" 2>&1)
status=$?
[ "$status" = 1 ] || fail "the check of a page with wrong examples exited $status, not 1"
wrong=$(grep -n '^\$ .*# wrong' "$tmp/page.md" | cut -d: -f1)
for line in $wrong; do
  grep -q "^$tmp/page.md:$line: " <<< "$out" || fail "line $line is not named as differing"
done
n=$(grep -c "^$tmp/.*\.md:[0-9]*: " <<< "$out")
[ "$n" = 3 ] || fail "$n examples named as differing, not 3"
grep -q "^12 examples run, 3 differ from their documents$" <<< "$out" ||
  fail "the summary is not '12 examples run, 3 differ from their documents'"

printf '# nothing to run\n\n```\nadstore eval 1\n```\n' > "$tmp/empty.md"
empty=$("$check" "$prog" "$tmp/empty.md" 2>&1)
status=$?
[ "$status" = 1 ] && grep -q "^no examples found" <<< "$empty" ||
  fail "a page without examples: exit $status, '$empty'"

if [ "$failed" = 1 ]; then
  echo "--- the check's output for the page:"
  echo "$out"
  exit 1
fi
echo "check_doc_examples.sh: passes what holds, names each of the 3 examples that do not"
