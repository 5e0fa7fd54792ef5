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
# starts with the environment the test was given). A command whose text
# opens a here-document (<<END, <<'END', <<-END) goes on to the line that
# closes it; lines going on a command that is not complete yet (an open
# quote, a loop) may carry the "> " prompt of bash, which is dropped.
# Commands run with standard output line-buffered (stdbuf -oL), as it is on
# a terminal, so that their stdout and stderr lines come in the order a
# reader of a terminal sees them.
# Other blocks (grammars, C, layouts) are not run.
#
# What the program prints is compared exactly, except for what is different
# at every run; both the document's lines and the program's pass through the
# same normalization, so a document still shows real output:
#   - seconds taken and rates: "0.02 s" and "(149 records/s)" (rows/s too)
#     become "<s> s" and "(<n> records/s)";
#   - times made from the clock: an ISO 8601 time dated 2025-01-01 or later
#     ("2026-11-22T15:27:43.1161616Z") becomes "<time>"; the fixed times the
#     documents use as data are all earlier (1970, 2011, 2023, 2024), and are
#     compared as they are;
#   - the store's node id, made at random when a store is created, in
#     "node 1b3f568b7ece" (stats) and 'Node = "1b3f568b7ece"' (text dumps);
#   - a carriage return ending a line (csv ends its lines with CRLF);
#   - the scratch directory's path, if a command prints it, becomes "<dir>".
# Nothing else is: generated ids, sizes and counts are compared as shown, so
# the examples select around ids (or use their own scratch stores) rather
# than print them. An output line cannot start with "$ " (it would be read as
# the next command). Each example that differs is named "DOC:LINE: $ COMMAND"
# with its exit status and a diff of the normalized lines.
#   check_doc_examples.sh ADSTORE DOC...
set -uo pipefail
prog=$1
shift
bindir=$(cd "$(dirname "$prog")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 ran=0

# normalize: what differs at every run, as the header says (stdin to stdout)
normalize() {
  sed -E -e 's/\r$//' \
    -e 's/(^|[^0-9.])[0-9]+\.[0-9]+ s\b/\1<s> s/g' \
    -e 's#\([0-9]+ (records|rows)/s\)#(<n> \1/s)#g' \
    -e 's/\b20(2[5-9]|[3-9][0-9])-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/<time>/g' \
    -e 's/\bnode [0-9a-f]{12}\b/node <node>/g' \
    -e 's/\bNode = "[0-9a-f]{12}"/Node = "<node>"/g' \
    -e "s#$work#<dir>#g"
}

# run_one DOC LINE COMMAND EXPECTED-FILE: run COMMAND, compare with the file
# stdbuf works by preloading a library, which then comes before the
# AddressSanitizer runtime: ASan refuses that unless told it may (it still
# intercepts allocation, the library defining none), so the examples run
# under the sanitizer build too.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

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
  # (a command still running after 10 minutes is stopped: status 124)
  (cd "$work" && PATH="$bindir:$PATH" timeout -k 10 600 stdbuf -oL bash -c "$cmd") \
    > "$tmp/got" 2>&1 || status=$?
  ran=$((ran + 1))
  normalize < "$want" > "$tmp/want.n"
  normalize < "$tmp/got" > "$tmp/got.n"
  if ! diff -u "$tmp/want.n" "$tmp/got.n" > "$tmp/diff" || [ "$status" != "$want_status" ]; then
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
  in_block=0 transcript=0 cmd="" cmd_line=0 n=0 heredoc=""
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
    if [ -n "$heredoc" ]; then # a here-document, up to its closing word
      cmd+=$'\n'$text
      [ "$text" = "$heredoc" ] && heredoc=""
    elif [ -n "$cmd" ] && [ ! -s "$tmp/want" ] && ! bash -n -c "$cmd" 2>/dev/null; then
      [[ $text == '> '* ]] && text=${text#> } # bash's prompt for more
      cmd+=$'\n'$text # a command going on over lines (an open quote, a loop)
    elif [[ $text == '$ '* ]]; then
      [ -n "$cmd" ] && run_one "$doc" "$cmd_line" "$cmd" "$tmp/want"
      cmd=${text#\$ } cmd_line=$n heredoc=""
      if [[ $cmd =~ \<\<-?[[:space:]]*[\'\"]?([A-Za-z_][A-Za-z0-9_]*) ]]; then
        heredoc=${BASH_REMATCH[1]}
      fi
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
