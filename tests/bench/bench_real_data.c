/*
 * tests/bench/bench_real_data.c: the realistic records of issue 17, written
 * as JSON Lines the way HTCondor's -json output spells them, and the three
 * queries of each set in each system's language.
 *
 * Slot ads (type Machine, keyed by Name): 36 attributes, about 820 bytes of
 * JSON each, `slot3@node04211.example.org`; nodes have 1..16 slots and share
 * their Arch, OpSys, memory and disk among them. Job ads (type Job, keyed by
 * GlobalJobId `submit3.example.org#104211.7#1698796800`): 34 attributes,
 * owners u0..u999, JobStatus 1..5, QDate spread over 30 days, clusters of
 * 1..20 procs from 8 schedds.
 *
 * Records arrive in collector order, not key order: the list of records is
 * shuffled with a fixed seed (Fisher-Yates over bench_mix), so nodes and
 * slots, schedds and clusters interleave. Every value is a function of the
 * record's identity and the seed: the same file for the same (n, seed).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/bench_real.h"

#define DAY 86400
#define QDATE0 1698796800 /* 2023-11-01T00:00:00Z: the month the jobs were queued in */
#define NOW0 (QDATE0 + 31 * DAY)
#define MAX_SLOTS_PER_NODE 16
#define MAX_PROCS 20
#define SCHEDDS 8
#define OWNERS 1000

/* ---- the queries ---- */

static const real_set sets[] = {
    {REAL_SLOTS,
     "slots",
     "Machine",
     "Name",
     "slots",
     {{"Q1 count, 4 terms",
       "SELECT count(*) AS n FROM Machine WHERE OpSys == \"LINUX\" && State == \"Unclaimed\" "
       "&& Memory >= 4096 && Cpus >= 2",
       "SELECT count(*) AS n FROM slots WHERE json_extract(doc, '$.OpSys') = 'LINUX' AND "
       "json_extract(doc, '$.State') = 'Unclaimed' AND json_extract(doc, '$.Memory') >= 4096 "
       "AND json_extract(doc, '$.Cpus') >= 2",
       "SELECT count(*) AS n FROM slots WHERE OpSys = 'LINUX' AND State = 'Unclaimed' AND "
       "Memory >= 4096 AND Cpus >= 2",
       -1},
      {"Q2 filter, 4 cols csv",
       "SELECT Name, Memory, Cpus, LoadAvg FROM Machine WHERE Arch == \"aarch64\" && "
       "Activity == \"Idle\" && KFlops > 2500000",
       "SELECT json_extract(doc, '$.Name') AS Name, json_extract(doc, '$.Memory') AS Memory, "
       "json_extract(doc, '$.Cpus') AS Cpus, json_extract(doc, '$.LoadAvg') AS LoadAvg FROM "
       "slots WHERE json_extract(doc, '$.Arch') = 'aarch64' AND json_extract(doc, "
       "'$.Activity') = 'Idle' AND json_extract(doc, '$.KFlops') > 2500000",
       "SELECT Name, Memory, Cpus, LoadAvg FROM slots WHERE Arch = 'aarch64' AND "
       "Activity = 'Idle' AND KFlops > 2500000",
       -1},
      {"Q3 group 2 keys, 4 aggs",
       "SELECT Arch, State, count(*) AS n, sum(Cpus) AS cpus, avg(Memory) AS mem, "
       "max(LoadAvg) AS load FROM Machine GROUP BY Arch, State",
       "SELECT json_extract(doc, '$.Arch') AS Arch, json_extract(doc, '$.State') AS State, "
       "count(*) AS n, sum(json_extract(doc, '$.Cpus')) AS cpus, avg(json_extract(doc, "
       "'$.Memory')) AS mem, max(json_extract(doc, '$.LoadAvg')) AS load FROM slots GROUP BY "
       "1, 2",
       "SELECT Arch, State, count(*) AS n, sum(Cpus) AS cpus, avg(Memory) AS mem, "
       "max(LoadAvg) AS load FROM slots GROUP BY Arch, State",
       2}}},
    {REAL_JOBS,
     "jobs",
     "Job",
     "GlobalJobId",
     "jobs",
     {{"Q1 count, 4 terms",
       "SELECT count(*) AS n FROM Job WHERE JobStatus == 2 && RequestMemory >= 4096 && "
       "RequestCpus >= 2 && QDate >= 1700092800",
       "SELECT count(*) AS n FROM jobs WHERE json_extract(doc, '$.JobStatus') = 2 AND "
       "json_extract(doc, '$.RequestMemory') >= 4096 AND json_extract(doc, '$.RequestCpus') "
       ">= 2 AND json_extract(doc, '$.QDate') >= 1700092800",
       "SELECT count(*) AS n FROM jobs WHERE JobStatus = 2 AND RequestMemory >= 4096 AND "
       "RequestCpus >= 2 AND QDate >= 1700092800",
       -1},
      {"Q2 filter, 4 cols csv",
       "SELECT GlobalJobId, Owner, RequestCpus, RemoteWallClockTime FROM Job WHERE "
       "JobStatus == 5 && RemoteWallClockTime > 20000.0 && QDate < 1699401600",
       "SELECT json_extract(doc, '$.GlobalJobId') AS GlobalJobId, json_extract(doc, "
       "'$.Owner') AS Owner, json_extract(doc, '$.RequestCpus') AS RequestCpus, "
       "json_extract(doc, '$.RemoteWallClockTime') AS RemoteWallClockTime FROM jobs WHERE "
       "json_extract(doc, '$.JobStatus') = 5 AND json_extract(doc, '$.RemoteWallClockTime') "
       "> 20000.0 AND json_extract(doc, '$.QDate') < 1699401600",
       "SELECT GlobalJobId, Owner, RequestCpus, RemoteWallClockTime FROM jobs WHERE "
       "JobStatus = 5 AND RemoteWallClockTime > 20000.0 AND QDate < 1699401600",
       -1},
      {"Q3 group 2 keys, 4 aggs",
       "SELECT Owner, JobStatus, count(*) AS n, sum(RequestCpus) AS cpus, "
       "avg(RemoteWallClockTime) AS wall, max(QDate) AS last FROM Job GROUP BY Owner, JobStatus",
       "SELECT json_extract(doc, '$.Owner') AS Owner, json_extract(doc, '$.JobStatus') AS "
       "JobStatus, count(*) AS n, sum(json_extract(doc, '$.RequestCpus')) AS cpus, "
       "avg(json_extract(doc, '$.RemoteWallClockTime')) AS wall, max(json_extract(doc, "
       "'$.QDate')) AS last FROM jobs GROUP BY 1, 2",
       "SELECT Owner, JobStatus, count(*) AS n, sum(RequestCpus) AS cpus, "
       "avg(RemoteWallClockTime) AS wall, max(QDate) AS last FROM jobs GROUP BY Owner, "
       "JobStatus",
       2}}},
};

const real_set *real_set_of(real_kind kind)
{
    return &sets[kind];
}

/* ---- collector order ---- */

/* The records as (group << 8 | member) codes: a node and its slot, or a
 * cluster and its proc; groups have 1..max members, decided by the seed. */
static uint64_t *make_codes(uint64_t n, uint64_t seed, unsigned max)
{
    uint64_t *codes = malloc((n ? n : 1) * sizeof *codes);
    if (!codes)
        return NULL;
    uint64_t i = 0;
    for (uint64_t g = 0; i < n; g++) {
        unsigned members = 1 + (unsigned)(bench_mix(g ^ seed) % max);
        for (unsigned m = 1; m <= members && i < n; m++)
            codes[i++] = g << 8 | m;
    }
    return codes;
}

/* A fixed Fisher-Yates shuffle: the order a collector or a history file
 * hands records over in, unrelated to key order. */
static void shuffle(uint64_t *codes, uint64_t n, uint64_t seed)
{
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = bench_mix(i * 31 + seed) % i, t = codes[i - 1];
        codes[i - 1] = codes[j];
        codes[j] = t;
    }
}

/* ---- slot ads ---- */

static const char *const archs[] = {"X86_64", "X86_64", "X86_64", "X86_64", "X86_64",
                                    "X86_64", "X86_64", "aarch64", "aarch64", "ppc64le"};
static const char *const states[] = {"Claimed", "Claimed", "Unclaimed", "Unclaimed", "Owner",
                                     "Matched", "Claimed", "Unclaimed"};

static void write_slot(FILE *f, uint64_t code, uint64_t seed)
{
    uint64_t node = code >> 8, slot = code & 0xff;
    uint64_t h = bench_mix(node * 7 + seed), x = bench_mix(code * 13 + seed);
    unsigned slots = 1 + (unsigned)(bench_mix(node ^ seed) % MAX_SLOTS_PER_NODE);
    const char *arch = archs[h % 10];
    bool windows = (h >> 8) % 10 == 0;
    int64_t node_cpus = (int64_t)slots * (1 + (int64_t)((h >> 12) % 4));
    int64_t node_mem = node_cpus * (int64_t)(1024 << ((h >> 16) % 4));
    int64_t node_disk = 50000000 + (int64_t)((h >> 20) % 400000000);
    const char *state = states[x % 8];
    bool claimed = strcmp(state, "Claimed") == 0;
    const char *activity = claimed && (x >> 4) % 4 ? "Busy" : "Idle";
    int load = claimed ? (int)((x >> 8) % 100) : (int)((x >> 8) % 10);
    int ip2 = (int)(node / 250 % 250), ip3 = (int)(node % 250);
    fprintf(f,
            "{\"MyType\":\"Machine\",\"Name\":\"slot%" PRIu64 "@node%05" PRIu64 ".example.org\","
            "\"Machine\":\"node%05" PRIu64 ".example.org\",\"SlotID\":%" PRIu64 ","
            "\"SlotType\":\"Static\",\"Arch\":\"%s\",\"OpSys\":\"%s\",\"OpSysAndVer\":\"%s\","
            "\"OpSysMajorVer\":%d,\"Memory\":%" PRId64 ",\"TotalMemory\":%" PRId64 ","
            "\"Disk\":%" PRId64 ",\"TotalDisk\":%" PRId64 ",\"Cpus\":%" PRId64 ","
            "\"TotalCpus\":%" PRId64 ",\"TotalSlots\":%u,\"LoadAvg\":%d.%02d,"
            "\"ClockMin\":%d,\"TotalLoadAvg\":%d.%02d,\"State\":\"%s\","
            "\"Activity\":\"%s\",\"ClockDay\":%" PRIu64 ",\"KFlops\":%" PRIu64 ","
            "\"Mips\":%" PRIu64 ",\"Start\":true,"
            "\"Requirements\":\"\\/Expr(START && (WithinResourceLimits))\\/\",\"Rank\":0.0,"
            "\"StartdIpAddr\":\"<10.%d.%d.%d:9618?addrs=10.%d.%d.%d-9618&noUDP>\","
            "\"CondorVersion\":\"$CondorVersion: 23.0.%d 2024-05-%02d BuildID: %d $\","
            "\"CondorPlatform\":\"$CondorPlatform: %s_AlmaLinux9 $\","
            "\"UidDomain\":\"example.org\",\"IsOwner\":false,"
            "\"HasFileTransfer\":true,\"NumPids\":%" PRIu64 ",\"LastHeardFrom\":%" PRIu64 ","
            "\"JobStarts\":%" PRIu64 "}\n",
            slot, node, node, slot, arch, windows ? "WINDOWS" : "LINUX",
            windows ? "Windows10" : "AlmaLinux9", windows ? 10 : 9, node_mem / slots, node_mem,
            node_disk / slots, node_disk, node_cpus / slots, node_cpus, slots, load / 100,
            load % 100, (int)((x >> 10) % 60), load * (int)slots / 100, load * (int)slots % 100,
            state, activity, (x >> 16) % 7, 800000 + (x >> 20) % 2400000, (x >> 24) % 30000,
            1 + ip2 / 100, ip2, ip3, 1 + ip2 / 100, ip2, ip3, (int)(h % 12),
            1 + (int)((h >> 24) % 28), 700000 + (int)(h % 99999), strcmp(arch, "X86_64") == 0 ? "x86_64" : arch,
            claimed ? 1 + (x >> 32) % 200 : 0, NOW0 + (x >> 36) % 300, (x >> 40) % 500);
}

/* ---- job ads ---- */

/* JobStatus 1 idle, 2 running, 3 removed, 4 completed, 5 held: the mix of a
 * busy pool's queue and recent history. */
static const int statuses[] = {1, 1, 1, 2, 2, 2, 2, 4, 4, 3, 5, 5};

static void write_job(FILE *f, uint64_t code, uint64_t seed)
{
    uint64_t cluster = code >> 8, proc = code & 0xff;
    uint64_t h = bench_mix(cluster * 5 + seed), x = bench_mix(code * 11 + seed);
    unsigned schedd = 1 + (unsigned)(h % SCHEDDS), owner = (unsigned)((h >> 4) % OWNERS);
    uint64_t qdate = QDATE0 + (h >> 16) % (30 * DAY), cid = 100000 + cluster;
    int status = statuses[x % 12];
    int64_t cpus = (int64_t)1 << ((h >> 40) % 4), mem = (int64_t)1024 << ((h >> 44) % 5);
    double wall = status == 1 ? 0.0 : (double)((x >> 8) % 86400) + (double)((x >> 24) % 100) / 100;
    fprintf(f,
            "{\"MyType\":\"Job\",\"TargetType\":\"Machine\",\"GlobalJobId\":\"submit%u.example."
            "org#%" PRIu64 ".%" PRIu64 "#%" PRIu64 "\",\"ClusterId\":%" PRIu64 ",\"ProcId\":%"
            PRIu64 ",\"Owner\":\"u%u\",\"User\":\"u%u@example.org\",\"AcctGroup\":\"group_%u\","
            "\"JobStatus\":%d,\"LastJobStatus\":%d,\"QDate\":%" PRIu64 ","
            "\"EnteredCurrentStatus\":%" PRIu64 ",\"JobUniverse\":5,\"JobPrio\":%d,"
            "\"Cmd\":\"/home/u%u/bin/sim%u\",\"Iwd\":\"/home/u%u/run%" PRIu64 "\","
            "\"Arguments\":\"-n %" PRIu64 " -seed %" PRIu64 "\",\"RequestCpus\":%" PRId64 ","
            "\"RequestMemory\":%" PRId64 ",\"RequestDisk\":%" PRIu64 ",\"ImageSize\":%" PRIu64 ","
            "\"DiskUsage\":%" PRIu64 ",\"RemoteUserCpu\":%.2f,\"RemoteSysCpu\":%.2f,"
            "\"RemoteWallClockTime\":%.2f,\"NumJobStarts\":%d,\"JobRunCount\":%d,"
            "\"ExitCode\":%d,\"ShouldTransferFiles\":\"YES\",\"WhenToTransferOutput\":\"ON_EXIT\","
            "\"Out\":\"out.%" PRIu64 ".%" PRIu64 "\",\"Err\":\"err.%" PRIu64 ".%" PRIu64 "\","
            "\"Requirements\":\"\\/Expr((TARGET.Arch == \\\"X86_64\\\") && (TARGET.OpSys == "
            "\\\"LINUX\\\") && (TARGET.Memory >= RequestMemory))\\/\"}\n",
            schedd, cid, proc, qdate, cid, proc, owner, owner, owner % 20, status,
            status == 1 ? 1 : 2, qdate, qdate + (x >> 12) % (2 * DAY), (int)((h >> 48) % 10),
            owner, (unsigned)(h >> 52) % 10, owner, cid, proc, x % 1000000, cpus, mem,
            (x >> 16) % 10000000, (x >> 20) % 4000000, (x >> 24) % 1000000, wall * 0.9, wall * 0.05,
            wall, status == 1 ? 0 : 1 + (int)((x >> 44) % 3), status == 1 ? 0 : 1,
            status == 4 ? (int)((x >> 50) % 2) : 0, cid, proc, cid, proc);
}

int real_write_jsonl(real_kind kind, uint64_t n, uint64_t seed, const char *path,
                     uint64_t *bytes)
{
    uint64_t *codes = make_codes(n, seed, kind == REAL_SLOTS ? MAX_SLOTS_PER_NODE : MAX_PROCS);
    if (!codes)
        return bench_fail("generating", "out of memory");
    shuffle(codes, n, seed);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(codes);
        return bench_fail(path, strerror(errno));
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    for (uint64_t i = 0; i < n; i++) {
        if (kind == REAL_SLOTS)
            write_slot(f, codes[i], seed);
        else
            write_job(f, codes[i], seed);
    }
    free(codes);
    long size = ftell(f);
    if (fclose(f) != 0 || size < 0)
        return bench_fail(path, "cannot write");
    *bytes = (uint64_t)size;
    return 0;
}
