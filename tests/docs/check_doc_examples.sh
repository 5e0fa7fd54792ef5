#!/usr/bin/env bash
# Run the shell examples of documents and compare what they print with what
# the documents show. An example is a fenced block whose first line starts
# with "$ ": each "$ COMMAND" line runs in bash (in one scratch directory
# per document, in order, with the adstore under test first on PATH), and the
# lines up to the next "$ " are its standard output and error together (a
# command whose quotes are still open goes on over the next lines); a
# last line "[exit N]" is its exit status, which is otherwise 0. "$ cat FILE"
# of a file the scratch directory does not hold yet creates FILE from the
# lines shown, so a document can show the input files its examples read;
# "$ export NAME=VALUE" holds for the rest of the document (each document
# starts with the environment the test was given).
# Other blocks (grammars, C, layouts) are not run.
#   check_doc_examples.sh ADSTORE DOC...
set -uo pipefail
prog=$1
shift
bindir=$(cd "$(dirname "$prog")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 ran=0

# run_one DOC LINE COMMAND EXPECTED-FILE: run COMMAND, compare with the file
run_one() {
  local doc=$1 line=$2 cmd=$3 want=$4 status=0 want_status=0
  if [ -s "$want" ] && last=$(tail -n 1 "$want") && [[ $last =~ ^\[exit\ ([0-9]+)\]$ ]]; then
    want_status=${BASH_REMATCH[1]}
    sed -i '$d' "$want"
  fi
  if [[ $cmd =~ ^cat\ ([A-Za-z0-9._/-]+)$ ]] && [ ! -e "$work/${BASH_REMATCH[1]}" ]; then
    mkdir -p "$work/$(dirname "${BASH_REMATCH[1]}")"
    cp "$want" "$work/${BASH_REMATCH[1]}" # the document shows the file: make it
  fi
  if [[ $cmd =~ ^export\ ([A-Za-z_][A-Za-z0-9_]*)=([^[:space:]\'\"\$]*)$ ]]; then
    export "${BASH_REMATCH[1]}=${BASH_REMATCH[2]}" # lasts for the rest of the document
    doc_exports+=("${BASH_REMATCH[1]}")
  fi
  (cd "$work" && PATH="$bindir:$PATH" bash -c "$cmd") > "$tmp/got" 2>&1 || status=$?
  ran=$((ran + 1))
  if ! diff -u "$want" "$tmp/got" > "$tmp/diff" || [ "$status" != "$want_status" ]; then
    echo "$doc:$line: \$ $cmd"
    echo "  exit status $status (the document: $want_status)"
    sed 's/^/  /' "$tmp/diff"
    failures=$((failures + 1))
  fi
}

env_file=$tmp/env
export -p > "$env_file"
doc_exports=()
for doc in "$@"; do
  # the environment as given: a document's exports end with it
  [ "${#doc_exports[@]}" = 0 ] || unset "${doc_exports[@]}"
  doc_exports=()
  # shellcheck disable=SC1090
  source "$env_file"
  work=$tmp/$(basename "$doc" .md)
  mkdir -p "$work"
  in_block=0 transcript=0 cmd="" cmd_line=0 n=0
  : > "$tmp/want"
  while IFS= read -r text || [ -n "$text" ]; do
    n=$((n + 1))
    if [[ $text =~ ^\`\`\` ]]; then
      if [ "$in_block" = 1 ]; then
        [ -n "$cmd" ] && run_one "$doc" "$cmd_line" "$cmd" "$tmp/want"
        in_block=0 transcript=0 cmd=""
      else
        in_block=1 transcript=-1
      fi
      continue
    fi
    [ "$in_block" = 1 ] || continue
    if [ "$transcript" = -1 ]; then # the block's first line decides
      if [[ $text == '$ '* ]]; then transcript=1; else transcript=0; fi
    fi
    [ "$transcript" = 1 ] || continue
    if [ -n "$cmd" ] && [ ! -s "$tmp/want" ] && ! bash -n -c "$cmd" 2>/dev/null; then
      cmd+=$'\n'$text # a command going on over lines (an open quote)
    elif [[ $text == '$ '* ]]; then
      [ -n "$cmd" ] && run_one "$doc" "$cmd_line" "$cmd" "$tmp/want"
      cmd=${text#\$ } cmd_line=$n
      : > "$tmp/want"
    else
      printf '%s\n' "$text" >> "$tmp/want"
    fi
  done < "$doc"
done
if [ "$ran" = 0 ]; then
  echo "no examples found in $*"
  exit 1
fi
echo "$ran examples run, $failures differ from their documents"
[ "$failures" = 0 ]
