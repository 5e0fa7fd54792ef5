#!/usr/bin/env bash
# The program's own description of itself: --version and 'adstore version'
# print the release CMake was given, 'adstore help' shows both; the man page
# (as CMake configured it) renders with groff without a warning; the bash
# completion offers the right words for a few prefixes.
#   check_program.sh ADSTORE VERSION MAN-PAGE COMPLETION-SCRIPT
set -euo pipefail
prog=$1 version=$2 man=$3 completion=$4
fail() { echo "program check: $*" >&2; exit 1; }
expect() { # expect WHAT GOT WANT
  [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

format=$("$prog" --version | sed -n 's/^adstore [^ ]* (store format \([0-9]*\))$/\1/p')
[ -n "$format" ] || fail "--version printed '$("$prog" --version)'"
expect "--version" "$("$prog" --version)" "adstore $version (store format $format)"
expect "adstore version" "$("$prog" version)" "adstore $version (store format $format)"
"$prog" version extra >/dev/null 2>&1 && fail "'adstore version extra' succeeded"
help=$("$prog" help)
grep -qx "  version print the version: adstore $version" <<< "$help" ||
  fail "'adstore help' does not list the version command with the version"
grep -q '^  --version  *print the version and exit$' <<< "$help" ||
  fail "'adstore help' does not list --version"

grep -q "^\.TH ADSTORE 1 \"\" \"adstore $version\"" "$man" || fail "$man does not carry version $version"
if command -v groff >/dev/null; then
  warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$man" 2>&1)
  [ -z "$warnings" ] || fail "groff warns about $man: $warnings"
  text=$(LC_ALL=C.UTF-8 groff -man -Tutf8 "$man" 2>&1 | sed 's/.\x08//g')
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS ENVIRONMENT "EXIT STATUS" EXAMPLES; do
    grep -qx "$section" <<< "$text" || fail "the man page has no $section section"
  done
  # every command of 'adstore help' is in the man page
  for cmd in $(sed -n '/^Commands:$/,/^$/s/^  \([a-z]*\) .*/\1/p' <<< "$help"); do
    grep -q "^       $cmd\b" <<< "$text" || fail "the man page does not describe '$cmd'"
  done
else
  echo "groff not installed: the man page was only checked for its version"
fi

# completion: COMP_WORDS as bash sets them for the line typed so far
complete_line() { # complete_line WORD...: what completion offers for the last word
  bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _adstore
    printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "
  ' complete "$completion" "$@"
}
expect "completion of 'adstore ex'" "$(complete_line adstore ex)" "execute "
expect "completion of 'adstore -d x i'" "$(complete_line adstore -d x i)" "id import "
expect "completion of 'adstore id '" "$(complete_line adstore id '')" "new next parse "
expect "completion of 'adstore id new r'" "$(complete_line adstore id new r)" "random "
expect "completion of 'adstore fluid encode --to d'" "$(complete_line adstore fluid encode --to d)" \
  "dec dothex "
expect "completion of 'adstore execute -format c'" "$(complete_line adstore execute -format c)" "csv "
expect "completion of 'adstore execute -f j'" "$(complete_line adstore execute -f j)" "json jsonl "
expect "completion of 'adstore execute --n'" "$(complete_line adstore execute --n)" "--noheader "
expect "completion of 'adstore dump --format '" "$(complete_line adstore dump --format '')" \
  "msgpack text "
expect "completion of 'adstore import --re'" "$(complete_line adstore import --re)" \
  "--replace --restart "
# every command of 'adstore help' completes
for cmd in $(sed -n '/^Commands:$/,/^$/s/^  \([a-z]*\) .*/\1/p' <<< "$help"); do
  offered=$(complete_line adstore "$cmd")
  grep -qw -- "$cmd" <<< "$offered" || fail "completion does not offer '$cmd'"
done
echo "program check passed: version $version, man page, completion"
