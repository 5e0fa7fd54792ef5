#!/usr/bin/env bash
# The whole test run, as README.md and CI use it:
#   1. install missing Debian packages (tools/setup.sh);
#   2. configure and build with -Wall -Wextra -Werror, run every test (ctest);
#   3. build again with -fsanitize=address,undefined and run every test again.
# Build trees: build/ and build-asan/ at the top of the source tree.
# Environment: ADS_TEST_JOBS (parallel build/test jobs, default: number of cores),
#              ADS_SKIP_SANITIZE=1 to skip step 3 (local iteration only).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${ADS_TEST_JOBS:-$(nproc)}
start=$(date +%s)

tools/setup.sh

run_suite() {
  local dir=$1; shift
  echo "== configure $dir: $*"
  cmake -S . -B "$dir" -DADS_WERROR=ON "$@" >/dev/null
  echo "== build $dir"
  cmake --build "$dir" -j "$jobs"
  echo "== test $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 900
}

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "${ADS_SKIP_SANITIZE:-0}" != 1 ]; then
  # detect_leaks: LeakSanitizer runs with ASan; halt_on_error keeps failures loud.
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DADS_SANITIZE=ON
fi
echo "== all tests passed in $(( $(date +%s) - start ))s"
