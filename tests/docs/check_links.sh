#!/usr/bin/env bash
# README.md and docs/*.md point only at files in the repository: every
# relative link target exists, and no page names a path outside it (the
# specification's shared/ folder, or ../ out of the checkout).
#   check_links.sh SOURCE-DIR
set -uo pipefail
src=$1
status=0
cd "$src" || exit 1
for page in README.md docs/*.md; do
  dir=$(dirname "$page")
  # [text](target) with a relative target, anchors dropped
  for target in $(grep -o '](\([^)#:]*\)\(#[^)]*\)\?)' "$page" | sed 's/^](//; s/)$//; s/#.*//' | sort -u); do
    [ -n "$target" ] || continue
    [ -e "$dir/$target" ] || { echo "$page: links to $target, which is not in the repository"; status=1; }
  done
  if grep -n 'shared/spec\|shared/data\|\.\./shared' "$page"; then
    echo "$page: names a file outside the repository (above)"
    status=1
  fi
done
[ "$status" = 0 ] && echo "README.md and docs/*.md link only inside the repository"
exit "$status"
