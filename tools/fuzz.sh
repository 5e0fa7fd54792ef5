#!/usr/bin/env bash
# Build the libFuzzer targets with clang (build-fuzz/) and run each for
# SECONDS (default 60), merging what it finds into tests/fuzz/corpus/<target>/.
# A crash input is left in tests/fuzz/ (crash-*): move it into the target's
# corpus folder once fixed, so the normal suite replays it forever.
#   tools/fuzz.sh [SECONDS] [TARGET...]
# Environment:
#   ADS_FUZZ_JOBS     build parallelism (default 1)
#   ADS_FUZZ_MAX_LEN  -max_len for every target (default: 256 for the small
#                     parsers, 4096 for the document formats)
#   ADS_FUZZ_ARGS     more libFuzzer flags, e.g. "-rss_limit_mb=4096"
#   ADS_FUZZ_CORPUS_MAX  a corpus left with more files than this (default
#                     1500) is re-merged into a fresh folder, edges only
# A dictionary tests/fuzz/<target>.dict, if present, is passed as -dict=.
# The whole libFuzzer output is kept in build-fuzz/fuzz-<target>.log.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}; shift || true
targets=("$@")
# default: every target tests/fuzz/CMakeLists.txt lists in ADS_FUZZ_TARGETS
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$(sed -n '/^set(ADS_FUZZ_TARGETS/,/)/p' \
    tests/fuzz/CMakeLists.txt | tr '()\n' '   ' | sed 's/^ *set *ADS_FUZZ_TARGETS//')"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADS_FUZZ=ON >/dev/null
for t in "${targets[@]}"; do
  cmake --build build-fuzz -j "${ADS_FUZZ_JOBS:-1}" --target "fuzz_$t" >/dev/null
  corpus=tests/fuzz/corpus/$t
  mkdir -p "$corpus" "build-fuzz/new-$t"
  case $t in
    msgpack_decode|json_read|long_read|xml_read|classad_read|dump_read) max_len=${ADS_FUZZ_MAX_LEN:-4096} ;;
    *) max_len=${ADS_FUZZ_MAX_LEN:-256} ;;
  esac
  dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=(-dict="$t.dict")
  echo "== fuzz_$t for ${secs}s (max_len $max_len)"
  # shellcheck disable=SC2086
  (cd tests/fuzz && ../../build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$secs" \
      -max_len="$max_len" "${dict[@]}" -print_final_stats=1 ${ADS_FUZZ_ARGS:-} \
      "../../build-fuzz/new-$t" "../../$corpus" 2>&1 | tee "../../build-fuzz/fuzz-$t.log" | tail -12)
  build-fuzz/tests/fuzz/fuzz_$t -merge=1 "$corpus" "build-fuzz/new-$t" 2>&1 | tail -1
  # Too many files: minimise into a fresh folder, by edges only (hit
  # counters off: the same coverage from far fewer inputs), keeping the
  # crash-* inputs under their own names.
  if [ "$(find "$corpus" -type f | wc -l)" -gt "${ADS_FUZZ_CORPUS_MAX:-1500}" ]; then
    fresh=build-fuzz/fresh-$t
    rm -rf "$fresh" && mkdir -p "$fresh"
    build-fuzz/tests/fuzz/fuzz_$t -merge=1 -use_counters=0 "$fresh" "$corpus" 2>&1 | tail -1
    for f in "$corpus"/crash-*; do
      [ -e "$f" ] || continue
      rm -f "$fresh/$(sha1sum "$f" | cut -d' ' -f1)"
      cp "$f" "$fresh/"
    done
    rm -rf "$corpus" && mv "$fresh" "$corpus"
    echo "re-merged: $(find "$corpus" -type f | wc -l) files in $corpus"
  fi
done
