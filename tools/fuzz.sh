#!/usr/bin/env bash
# Build the libFuzzer targets with clang (build-fuzz/) and run each for
# SECONDS (default 60), merging what it finds into tests/fuzz/corpus/<target>/.
# A crash input is left in tests/fuzz/ (crash-*): move it into the target's
# corpus folder once fixed, so the normal suite replays it forever.
#   tools/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}; shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(id_parse fluid_decode kid_decode)
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADS_FUZZ=ON >/dev/null
for t in "${targets[@]}"; do
  cmake --build build-fuzz -j "$(nproc)" --target "fuzz_$t" >/dev/null
  corpus=tests/fuzz/corpus/$t
  mkdir -p "$corpus" "build-fuzz/new-$t"
  echo "== fuzz_$t for ${secs}s"
  (cd tests/fuzz && ../../build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$secs" \
      -max_len=256 -print_final_stats=1 "../../build-fuzz/new-$t" "../../$corpus" 2>&1 | tail -12)
  build-fuzz/tests/fuzz/fuzz_$t -merge=1 "$corpus" "build-fuzz/new-$t" 2>&1 | tail -1
done
