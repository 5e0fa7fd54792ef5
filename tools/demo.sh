#!/usr/bin/env bash
# Set up, build, and run the main job on the embedded default store
# (./adstore.db, or $ADSTORE_DB). Until the statement language lands, the job
# is a tour of the identifiers the store hands out.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target adstore_cli >/dev/null
ads=build/tools/adstore
set -x
$ads id new -n 3                      # ordered ids (OUIDs) from the store's generator
$ads id new random                    # a version-4 UUID
$ads id new increment -n 2            # the store's increment counter
$ads id parse "$($ads id new)"        # what an ordered id holds
$ads fluid new -n 2                   # FLUIDs: 64-bit, 1024 per ms per generator
$ads fluid encode 6731191091817518    # every FLUID encoding of one value
$ads fluid decode 'reform-remote-galileo--heart-package-academy'
$ads kid new --global                 # a k-ordered 96-bit id
$ads kid decode .5.tXVEf8n8vPN.0
