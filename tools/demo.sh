#!/usr/bin/env bash
# Set up, build, and run the main job on the embedded default store
# (./adstore.db, or $ADSTORE_DB): a small pool of machines and jobs, loaded in
# bulk with a day of history, changed, queried now and over time, dumped,
# restored elsewhere and checked. The demo rebuilds the store on every run,
# so it refuses a store it did not make (it marks its own with a file
# .adstore-demo in the store's directory).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target adstore_cli >/dev/null

db=${ADSTORE_DB:-./adstore.db}
if [ -e "$db" ] && [ ! -e "$db/.adstore-demo" ]; then
  echo "demo: $db holds a store the demo did not make; set ADSTORE_DB=DIR to run it elsewhere" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$db"
ads() { build/tools/adstore -d "$db" "$@"; }

# A day of samples for six machines, every 10 minutes, in HTCondor's long
# form (what condor_status -long prints), dated by _Timestamp.
day=$(date -u -d 'yesterday 00:00' +%s)
for ((t = day; t < day + 86400; t += 600)); do
  for m in 1 2 3 4 5 6; do
    arch=$([ "$m" -le 4 ] && echo X86_64 || echo ARM64)
    busy=$(( (t / 3600 * (m + 1) + m + t / 1800 % 2) % 3 ))
    printf 'Name = "slot1@node%d"\nArch = "%s"\nMemory = %d\nCpus = %d\n' \
      "$m" "$arch" $((8192 * m)) $((4 * m))
    printf 'State = "%s"\nLoadAvg = %d.%02d\n' \
      "$([ $busy -eq 0 ] && echo Unclaimed || echo Claimed)" $busy $((m * 7 % 100))
    printf '_Timestamp = `%s`\n\n' "$(date -u -d "@$t" +%Y-%m-%dT%H:%M:%SZ)"
  done
done > "$tmp/pool.long"

set -x
# Declare the record types: machines keyed by Name, jobs keyed by a generated id.
ads execute 'STORE [ AdType = "Type"; ForType = "Machine"; KeyAttributes = { "Name" } ],
                   [ AdType = "Type"; ForType = "Job"; AutoGenerateKey = true ]'
touch "$db/.adstore-demo"
# Bulk-load the day of history (each sample dated by its own _Timestamp).
ads import --backfill --type Machine "$tmp/pool.long"
# Jobs arrive and change; every change is a new row of the record's timeline.
ads execute 'STORE [ AdType = "Job"; Owner = "alice"; Cmd = "sim"; RequestMemory = 4096; State = "Idle" ],
                   [ AdType = "Job"; Owner = "bob"; Cmd = "render"; RequestMemory = 16384; State = "Idle" ],
                   [ AdType = "Job"; Owner = "alice"; Cmd = "sim"; RequestMemory = 2048; State = "Idle" ]'
ads execute 'UPDATE Job SET State = "Running" WHERE Owner == "alice"'
# What is true now.
ads execute -format tabular 'SELECT Owner, Cmd, RequestMemory, State FROM Job ORDER BY Owner, RequestMemory'
ads execute -format tabular 'SELECT Name, Arch, Memory, State FROM Machine WHERE Memory >= 16384 ORDER BY Memory DESC LIMIT 3'
ads execute -format tabular 'SELECT Arch, count(*) AS Machines, sum(Memory) AS Memory, avg(LoadAvg) AS Load FROM Machine GROUP BY Arch'
# How many machines could run each job: a many-to-many ClassAd match (JOIN ALL,
# MY the job and TARGET the machine tried), counted per job.
ads execute -format tabular 'SELECT J.Owner, J.Cmd, J.RequestMemory, count(*) AS Machines FROM Job J JOIN ALL Machine M ON TARGET.Memory >= MY.RequestMemory GROUP BY J.Id, J.Owner, J.Cmd, J.RequestMemory ORDER BY J.RequestMemory'
# What was true over yesterday, hour by hour: claimed memory per architecture.
ads execute -format tabular "SELECT avg@(sum(Memory)) AS ClaimedMemory FROM Machine WHERE State == \"Claimed\" && @timerange(\`$(date -u -d "@$day" +%Y-%m-%dT%H:%M:%SZ)\`, \`$(date -u -d "@$((day + 6 * 3600))" +%Y-%m-%dT%H:%M:%SZ)\`) GROUP BY Arch, @intervals(\`1h\`)"
# Move the store: dump, restore elsewhere, check, and ask the copy the same question.
ads dump -o "$tmp/pool.dump"
build/tools/adstore -d "$tmp/copy.db" restore "$tmp/pool.dump"
build/tools/adstore -d "$tmp/copy.db" verify
build/tools/adstore -d "$tmp/copy.db" execute 'SELECT count(*) AS Jobs FROM Job'
ads stats
