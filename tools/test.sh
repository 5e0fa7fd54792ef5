#!/usr/bin/env bash
# The whole test run, as README.md and CI use it:
#   1. install missing Debian packages (tools/setup.sh);
#   2. configure and build with gcc, -Wall -Wextra -Werror, run every test (ctest);
#   3. build again with -fsanitize=address,undefined and run every test again;
#   4. build with clang (-Werror) and run every test again;
#   5. build a Release tree (gcc -O3, -Werror): the optimiser's warnings
#      (maybe-uninitialized and the like) are errors too.
# Build trees: build/, build-asan/, build-clang/ and build-release/ at the top
# of the source tree.
# Environment: ADS_TEST_JOBS (parallel build/test jobs, default: number of cores),
#              ADS_SKIP_SANITIZE=1 to skip step 3, ADS_SKIP_EXTRA=1 to skip
#              steps 4 and 5 (local iteration only).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${ADS_TEST_JOBS:-$(nproc)}
start=$(date +%s)

tools/setup.sh

configure() {
  local dir=$1; shift
  echo "== configure $dir: $*"
  cmake -S . -B "$dir" -DADS_WERROR=ON "$@" >/dev/null
  echo "== build $dir"
  cmake --build "$dir" -j "$jobs"
}

run_suite() {
  local dir=$1
  configure "$@"
  echo "== test $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 1800
}

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "${ADS_SKIP_SANITIZE:-0}" != 1 ]; then
  # detect_leaks: LeakSanitizer runs with ASan; halt_on_error keeps failures loud.
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DADS_SANITIZE=ON
  unset ASAN_OPTIONS UBSAN_OPTIONS
fi
if [ "${ADS_SKIP_EXTRA:-0}" != 1 ]; then
  CC=clang run_suite build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo
  configure build-release -DCMAKE_BUILD_TYPE=Release -DADS_BUILD_TESTS=OFF
fi
echo "== all tests passed in $(( $(date +%s) - start ))s"
