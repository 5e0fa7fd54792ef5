/*
 * tests/bench/bench.c: adstore-bench, the performance scenarios of
 * shared/spec/performance.md. Each row runs adstore's code and a baseline on
 * the same work, alternating, several repetitions, and prints the medians,
 * rates and ratio. Every number printed is measured in this run.
 *
 * Scenarios so far: P7 (identifiers: OUID, UUID and FLUID generation; F58,
 * words and emoji encode and decode) and P9 (ClassAd parse and evaluation of
 * the P3 constraint; five expressions over 10,000 distinct slot ads).
 *
 *   adstore-bench [--quick] [--reps N] [--only PREFIX]
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <strings.h>

#include <msgpack.h>

#include "classad/classad.h"
#include "tests/bench/bench.h"
#include "classad/msgpack.h"
#include "idgen/idgen.h"


/* Something the compiler cannot prove unused. */
static volatile uint64_t sink;

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A workload: run ops operations, return 0 or -1 on failure. */
typedef int (*work_fn)(uint64_t ops);

typedef struct row {
    const char *id;
    const char *what;
    const char *baseline;
    work_fn mine, base;
    uint64_t ops;
    double target_rate;  /* ops/s adstore must reach (0: none) */
    double target_ratio; /* adstore rate / baseline rate it must reach (0: none) */
} row;

/* ---- P7 workloads ---- */

static int w_ouid(uint64_t ops)
{
    ads_ouid_gen *g;
    ads_id id;
    uint64_t acc = 0;
    if (ads_ouid_gen_new(&g, NULL, NULL, NULL))
        return -1;
    for (uint64_t i = 0; i < ops; i++) {
        if (ads_ouid_gen_next(&id, g, NULL) < 0) {
            ads_ouid_gen_free(g);
            return -1;
        }
        acc += id.hi ^ id.lo;
    }
    sink = acc;
    ads_ouid_gen_free(g);
    return 0;
}

/* The ceiling: read the clock and pack a counter, nothing else. */
static int b_clock_counter(uint64_t ops)
{
    uint64_t acc = 0, last = 0, c = 0;
    for (uint64_t i = 0; i < ops; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t s = (uint64_t)ts.tv_sec;
        c = s == last ? c + 1 : 0;
        last = s;
        acc += (s << 28) | (c << 4) | 1;
    }
    sink = acc;
    return 0;
}

static int w_uuid_bulk(uint64_t ops)
{
    ads_id ids[256];
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i += 256) {
        size_t n = ops - i < 256 ? (size_t)(ops - i) : 256;
        if (ads_uuid_new_n(ids, n, NULL))
            return -1;
        acc += ids[0].lo;
    }
    sink = acc;
    return 0;
}

static int b_getrandom_bulk(uint64_t ops)
{
    uint64_t buf[512], acc = 0;
    for (uint64_t i = 0; i < ops; i += 256) {
        size_t n = ops - i < 256 ? (size_t)(ops - i) : 256;
        if (getrandom(buf, n * 16, 0) != (ssize_t)(n * 16))
            return -1;
        acc += buf[0];
    }
    sink = acc;
    return 0;
}

static int w_uuid_single(uint64_t ops)
{
    ads_id id;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++) {
        if (ads_uuid_new(&id, NULL))
            return -1;
        acc += id.lo;
    }
    sink = acc;
    return 0;
}

static int b_getrandom_single(uint64_t ops)
{
    uint64_t buf[2], acc = 0;
    for (uint64_t i = 0; i < ops; i++) {
        if (getrandom(buf, 16, 0) != 16)
            return -1;
        acc += buf[0];
    }
    sink = acc;
    return 0;
}

static int w_fluid(uint64_t ops)
{
    ads_fluid_state st;
    uint64_t v, acc = 0;
    if (ads_fluid_state_init(&st, 1, ADS_FLUID_EPOCH_ADSTORE_MS, NULL))
        return -1;
    for (uint64_t i = 0; i < ops; i++) {
        if (ads_fluid_next(&v, &st, NULL, NULL))
            return -1;
        acc += v;
    }
    sink = acc;
    return 0;
}

/* The ceiling for FLUIDs: the RFC's rule by hand (1024 per ms, then spin). */
static int b_fluid_minimal(uint64_t ops)
{
    uint64_t acc = 0, last = 0, seq = 0;
    for (uint64_t i = 0; i < ops; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 -
                      ADS_FLUID_EPOCH_ADSTORE_MS;
        if (ms > last) {
            last = ms;
            seq = 0;
        } else if (++seq == 1024) {
            do {
                clock_gettime(CLOCK_REALTIME, &ts);
                ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 -
                     ADS_FLUID_EPOCH_ADSTORE_MS;
            } while (ms <= last);
            last = ms;
            seq = 0;
        }
        acc += last << 24 | 1 << 10 | seq;
    }
    sink = acc;
    return 0;
}

/* Values spread over the whole 64-bit range and over realistic FLUIDs. */
static uint64_t value_at(uint64_t i)
{
    uint64_t x = (i + 1) * UINT64_C(0x9e3779b97f4a7c15);
    x ^= x >> 29;
    return (i & 1) ? x : x >> 8;
}

static int encode_loop(uint64_t ops, ads_fluid_enc enc)
{
    char buf[ADS_FLUID_TEXT_MAX + 1];
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++) {
        int n = ads_fluid_encode(buf, sizeof buf, value_at(i), enc, NULL);
        if (n < 0)
            return -1;
        acc += (uint64_t)n + (unsigned char)buf[n - 1];
    }
    sink = acc;
    return 0;
}

/* Decode a table of pre-encoded strings (encoding is not timed). */
#define TABLE 4096
static char dec_table[TABLE][ADS_FLUID_TEXT_MAX + 1];
static size_t dec_len[TABLE];

static void fill_table(ads_fluid_enc enc)
{
    for (int i = 0; i < TABLE; i++)
        dec_len[i] = (size_t)ads_fluid_encode(dec_table[i], sizeof dec_table[i],
                                              value_at((uint64_t)i), enc, NULL);
}

static int decode_loop(uint64_t ops, ads_fluid_enc enc)
{
    uint64_t v, acc = 0;
    fill_table(enc);
    for (uint64_t i = 0; i < ops; i++) {
        size_t k = i & (TABLE - 1);
        if (ads_fluid_decode(&v, NULL, dec_table[k], dec_len[k], NULL))
            return -1;
        acc += v;
    }
    sink = acc;
    return 0;
}

static int w_f58_enc(uint64_t ops) { return encode_loop(ops, ADS_FLUID_F58); }
static int w_f58_dec(uint64_t ops) { return decode_loop(ops, ADS_FLUID_F58); }
static int w_words_enc(uint64_t ops) { return encode_loop(ops, ADS_FLUID_WORDS); }
static int w_words_dec(uint64_t ops) { return decode_loop(ops, ADS_FLUID_WORDS); }
static int w_emoji_enc(uint64_t ops) { return encode_loop(ops, ADS_FLUID_EMOJI); }
static int w_emoji_dec(uint64_t ops) { return decode_loop(ops, ADS_FLUID_EMOJI); }

/* The reference point for a 64-bit codec: libc's decimal printing and parsing. */
static int b_snprintf(uint64_t ops)
{
    char buf[32];
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++) {
        int n = snprintf(buf, sizeof buf, "%" PRIu64, value_at(i));
        acc += (uint64_t)n + (unsigned char)buf[n - 1];
    }
    sink = acc;
    return 0;
}

static int b_strtoull(uint64_t ops)
{
    static char tab[TABLE][24];
    uint64_t acc = 0;
    for (int i = 0; i < TABLE; i++)
        snprintf(tab[i], sizeof tab[i], "%" PRIu64, value_at((uint64_t)i));
    for (uint64_t i = 0; i < ops; i++)
        acc += strtoull(tab[i & (TABLE - 1)], NULL, 10);
    sink = acc;
    return 0;
}

/* ---- P9: the P3 constraint, parsed and evaluated ---- */

#define P3_CONSTRAINT                                                                       \
    "Memory > 1024 && Arch == \"X86_64\" && (Disk >= 100000 || Owner == \"alice\")"

#define MACHINES 1024

/* The hand-written side: the same machines as plain C structs. */
typedef struct machine {
    int64_t memory, disk;
    const char *arch, *owner;
} machine;

static machine machines[MACHINES];
static const ads_record *machine_records[MACHINES];
static ads_arena *machine_arena;

static const char *const archs[] = {"X86_64", "x86_64", "ARM64", "PPC64LE"};
static const char *const owners[] = {"alice", "bob", "carol", "ALICE", "dave"};
static const char *const platforms[] = {"linux", "windows", "macos"};

/* Deterministic pseudo-random Machine records with 15 attributes. */
static int make_machines(void)
{
    if (machine_arena)
        return 0;
    machine_arena = ads_arena_new();
    if (!machine_arena)
        return -1;
    uint64_t x = 88172645463325252ULL;
    ads_buf b = ADS_BUF_INIT;
    for (int i = 0; i < MACHINES; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        machine *m = &machines[i];
        m->memory = (int64_t)(256 << (x % 7));
        m->disk = (int64_t)(x >> 8) % 400000;
        m->arch = archs[(x >> 20) % 4];
        m->owner = owners[(x >> 24) % 5];
        ads_buf_clear(&b);
        ads_buf_printf(&b,
                       "[Name = \"slot%d@node%d.example.org\"; Memory = %lld; Arch = \"%s\"; "
                       "Disk = %lld; Owner = \"%s\"; Platform = \"%s\"; Role = \"worker\"; "
                       "Cpus = %d; LoadAvg = %d.25; State = \"Unclaimed\"; Activity = "
                       "\"Idle\"; OpSys = \"LINUX\"; KFlops = %d; Mips = %d; Start = true]",
                       i % 8, i / 8, (long long)m->memory, m->arch, (long long)m->disk,
                       m->owner, platforms[(x >> 30) % 3], (int)(1 + x % 64),
                       (int)((x >> 3) % 4), (int)(x % 2000000), (int)(x % 30000));
        if (b.failed ||
            ads_record_parse(&machine_records[i], machine_arena, b.p, b.len, NULL)) {
            ads_buf_free(&b);
            return -1;
        }
    }
    ads_buf_free(&b);
    return 0;
}

static int w_parse(uint64_t ops)
{
    ads_arena *a = ads_arena_new();
    const char *text = P3_CONSTRAINT;
    size_t len = strlen(text);
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++) {
        const ads_expr *e;
        if (ads_expr_parse(&e, a, text, len, NULL)) {
            ads_arena_free(a);
            return -1;
        }
        acc += (uintptr_t)e & 0xff;
        ads_arena_reset(a);
    }
    sink = acc;
    ads_arena_free(a);
    return 0;
}

/* The floor of any parser: one hand-written pass classifying every byte
 * into tokens (names, numbers, strings, operators). */
static int b_tokenize(uint64_t ops)
{
    const char *text = P3_CONSTRAINT;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < ops; i++) {
        unsigned tokens = 0;
        for (const char *p = text; *p;) {
            if (*p == ' ') {
                p++;
            } else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z') {
                while ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z')
                    p++;
                tokens++;
            } else if (*p >= '0' && *p <= '9') {
                while (*p >= '0' && *p <= '9')
                    p++;
                tokens++;
            } else if (*p == '"') {
                p++;
                while (*p && *p != '"')
                    p++;
                p += *p == '"';
                tokens++;
            } else {
                p += (p[1] == '=' || p[1] == '&' || p[1] == '|') ? 2 : 1;
                tokens++;
            }
        }
        acc += tokens;
    }
    sink = acc;
    return 0;
}

static int eval_loop(uint64_t ops, bool prepared)
{
    ads_arena *a = ads_arena_new();
    const ads_expr *e;
    uint64_t acc = 0;
    if (!a || make_machines() ||
        ads_expr_parse(&e, machine_arena, P3_CONSTRAINT, strlen(P3_CONSTRAINT), NULL) ||
        (prepared && ads_expr_prepare(&e, machine_arena, e, NULL)))
        return -1;
    for (uint64_t i = 0; i < ops; i++) {
        ads_value v;
        ads_view view = ads_record_view(machine_records[i & (MACHINES - 1)], NULL);
        if (ads_expr_eval(&v, e, &view, a))
            return -1;
        acc += v.type == ADS_BOOLEAN && v.u.b;
        if ((i & 1023) == 1023)
            ads_arena_reset(a);
    }
    sink = acc;
    ads_arena_free(a);
    return 0;
}

static int w_eval_memory(uint64_t ops)
{
    return eval_loop(ops, true);
}

/* The ceiling: the constraint written in C over decoded fields. */
static int b_eval_c(uint64_t ops)
{
    uint64_t acc = 0;
    if (make_machines())
        return -1;
    for (uint64_t i = 0; i < ops; i++) {
        const machine *m = &machines[i & (MACHINES - 1)];
        acc += m->memory > 1024 && strcasecmp(m->arch, "X86_64") == 0 &&
               (m->disk >= 100000 || strcasecmp(m->owner, "alice") == 0);
    }
    sink = acc;
    return 0;
}

/* ---- P9: the same constraint over MessagePack row bytes ---- */

static ads_buf machine_rows[MACHINES];

static int make_rows(void)
{
    if (machine_rows[0].len)
        return 0;
    if (make_machines())
        return -1;
    for (int i = 0; i < MACHINES; i++)
        if (ads_msgpack_encode_record(&machine_rows[i], machine_records[i], NULL))
            return -1;
    return 0;
}

/* adstore: a record view straight over the row bytes (binary search of the
 * name index, only the attributes the constraint reads are decoded). */
static int w_eval_msgpack(uint64_t ops)
{
    ads_arena *a = ads_arena_new();
    const ads_expr *e;
    uint64_t acc = 0;
    if (!a || make_rows() ||
        ads_expr_parse(&e, machine_arena, P3_CONSTRAINT, strlen(P3_CONSTRAINT), NULL) ||
        ads_expr_prepare(&e, machine_arena, e, NULL))
        return -1;
    for (uint64_t i = 0; i < ops; i++) {
        const ads_buf *rb = &machine_rows[i & (MACHINES - 1)];
        ads_msgpack_view mv;
        ads_value v;
        if (ads_msgpack_view_init(&mv, rb->p, rb->len, a, NULL))
            return -1;
        ads_view view = ads_msgpack_view_get(&mv, NULL);
        if (ads_expr_eval(&v, e, &view, a))
            return -1;
        acc += v.type == ADS_BOOLEAN && v.u.b;
        ads_arena_reset(a);
    }
    sink = acc;
    ads_arena_free(a);
    return 0;
}

/* The ceiling: msgpack-c decodes the row (msgpack_unpack_next into a
 * reused zone), then C finds the four fields in the map by name and tests
 * them, as a hand-written filter over decoded MessagePack would. */
static bool field_eq(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
           strncasecmp(k->via.str.ptr, name, n) == 0;
}

static int b_eval_msgpack_c(uint64_t ops)
{
    uint64_t acc = 0;
    msgpack_unpacked u;
    if (make_rows())
        return -1;
    msgpack_unpacked_init(&u);
    for (uint64_t i = 0; i < ops; i++) {
        const ads_buf *rb = &machine_rows[i & (MACHINES - 1)];
        size_t off = 0;
        if (msgpack_unpack_next(&u, rb->p, rb->len, &off) != MSGPACK_UNPACK_SUCCESS ||
            u.data.type != MSGPACK_OBJECT_ARRAY || u.data.via.array.size != 2)
            return -1;
        const msgpack_object *map = &u.data.via.array.ptr[1];
        if (map->type != MSGPACK_OBJECT_MAP)
            return -1;
        int64_t memory = 0, disk = 0;
        bool x86 = false, alice = false;
        for (uint32_t j = 0; j < map->via.map.size; j++) {
            const msgpack_object *k = &map->via.map.ptr[j].key, *v = &map->via.map.ptr[j].val;
            if (field_eq(k, "Memory") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                memory = (int64_t)v->via.u64;
            else if (field_eq(k, "Disk") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                disk = (int64_t)v->via.u64;
            else if (field_eq(k, "Arch") && v->type == MSGPACK_OBJECT_STR)
                x86 = v->via.str.size == 6 && strncasecmp(v->via.str.ptr, "X86_64", 6) == 0;
            else if (field_eq(k, "Owner") && v->type == MSGPACK_OBJECT_STR)
                alice = v->via.str.size == 5 && strncasecmp(v->via.str.ptr, "alice", 5) == 0;
        }
        acc += memory > 1024 && x86 && (disk >= 100000 || alice);
    }
    msgpack_unpacked_destroy(&u);
    sink = acc;
    return 0;
}

/* ---- P9: five expressions over 10,000 distinct HTCondor-like slot ads ---- */

/* Issue 11: an external run measured evaluation over 10k distinct machine
 * ads, five expressions each. The same here: SLOTS ads of 35 or 36
 * attributes (~890 bytes of text each), generated deterministically, parsed
 * into records and encoded to MessagePack rows; each pass evaluates the five
 * expressions on every ad. One op is one evaluation. */

#define SLOTS 10000
#define SLOT_EXPRS 5

static const char *const slot_exprs[SLOT_EXPRS] = {
    P3_CONSTRAINT,
    ("OpSys == \"LINUX\" && Arch == \"X86_64\" && Memory >= 2048 && Cpus >= 1 && "
     "State == \"Unclaimed\""),
    "KFlops / 1000 + Memory / 1024",
    "regexp(\"^slot[0-9]+@node0[0-4]\", Name)",
    "Activity == \"Idle\" && LoadAvg < 0.3 && TotalCpus > 4",
};

/* The hand-written side: the fields the five read, decoded into a struct. */
typedef struct slot {
    int64_t memory, disk, cpus, total_cpus, kflops;
    double loadavg;
    const char *name, *arch, *opsys, *state, *activity, *owner; /* owner: NULL if none */
} slot;

static slot slots[SLOTS];
static const ads_record *slot_records[SLOTS];
static ads_buf slot_rows[SLOTS];
static const ads_expr *slot_prepared[SLOT_EXPRS];
static ads_arena *slot_arena;
static size_t slot_text_bytes;
static uint64_t slot_mine_result; /* the last adstore pass's checksum */

static const char *const slot_archs[] = {"X86_64", "X86_64", "x86_64", "aarch64", "ppc64le"};
static const char *const slot_opsys[] = {"LINUX", "LINUX", "LINUX", "WINDOWS", "OSX"};
static const char *const slot_states[] = {"Unclaimed", "Claimed", "Owner", "Matched"};
static const char *const slot_owners[] = {"alice", "bob", "carol", "dave", "erin"};

static char *slot_strdup(const char *s)
{
    char *p = ads_arena_alloc(slot_arena, strlen(s) + 1);
    if (p)
        memcpy(p, s, strlen(s) + 1);
    return p;
}

static int make_slots(void)
{
    if (slot_arena)
        return 0;
    slot_arena = ads_arena_new();
    if (!slot_arena)
        return -1;
    ads_buf b = ADS_BUF_INIT;
    int node = 0, slot_in_node = 0, slots_here = 0;
    int64_t node_mem = 0, node_disk = 0, node_cpus = 0;
    for (int i = 0; i < SLOTS; i++) {
        uint64_t x = bench_mix((uint64_t)i * 7919u + 11u);
        if (slot_in_node == slots_here) { /* the next node: 1..16 slots */
            uint64_t y = bench_mix((uint64_t)node + 1000003u);
            node++, slot_in_node = 0;
            slots_here = 1 + (int)(y % 16);
            node_cpus = (int64_t)slots_here * (1 + (int64_t)((y >> 8) % 4));
            node_mem = node_cpus * (int64_t)(1024 << ((y >> 12) % 3));
            node_disk = 50000 + (int64_t)((y >> 16) % 4000000);
        }
        slot_in_node++;
        slot *s = &slots[i];
        int64_t cpus = node_cpus / slots_here;
        s->cpus = cpus;
        s->total_cpus = node_cpus;
        s->memory = node_mem / slots_here;
        s->disk = node_disk / slots_here;
        s->kflops = 800000 + (int64_t)(x % 2400000);
        int load = (int)((x >> 22) % 100); /* LoadAvg in hundredths */
        uint64_t h = bench_mix((uint64_t)node);
        const char *arch = slot_archs[h % 5], *opsys = slot_opsys[(h >> 4) % 5];
        const char *state = slot_states[(x >> 30) % 4];
        const char *activity = strcmp(state, "Claimed") == 0 ? ((x >> 33) % 3 ? "Busy" : "Idle")
                                                              : "Idle";
        const char *owner = strcmp(state, "Claimed") == 0 ? slot_owners[(x >> 36) % 5] : NULL;
        int ip2 = node / 250, ip3 = node % 250;
        ads_buf_clear(&b);
        ads_buf_printf(
            &b,
            "[MyType = \"Machine\"; "
            "Name = \"slot%d@node%04d.example.org\"; Machine = \"node%04d.example.org\"; "
            "SlotID = %d; Arch = \"%s\"; OpSys = \"%s\"; OpSysAndVer = \"AlmaLinux9\"; "
            "OpSysMajorVer = 9; Memory = %lld; TotalMemory = %lld; Disk = %lld; "
            "TotalDisk = %lld; Cpus = %lld; TotalCpus = %lld; TotalSlots = %d; "
            "LoadAvg = %d.%02d; CondorLoadAvg = 0.%02d; TotalLoadAvg = %d.%02d; "
            "State = \"%s\"; Activity = \"%s\"; EnteredCurrentState = %lld; "
            "KFlops = %lld; Mips = %d; Start = true; "
            "Requirements = START && (WithinResourceLimits); Rank = 0.0; "
            "StartdIpAddr = \"<10.1.%d.%d:9618?addrs=10.1.%d.%d-9618&noUDP>\"; "
            "CondorVersion = \"$CondorVersion: 23.0.%d 2024-05-%02d BuildID: %d PackageID: "
            "23.0.%d-1 $\"; CondorPlatform = \"$CondorPlatform: x86_64_AlmaLinux9 $\"; "
            "UidDomain = \"example.org\"; "
            "HasFileTransfer = true; IsWakeAble = false; NumPids = %d; "
            "LastHeardFrom = %lld; UpdateSequenceNumber = %d%s%s%s]",
            slot_in_node, node, node, slot_in_node, arch, opsys, (long long)s->memory,
            (long long)node_mem, (long long)s->disk, (long long)node_disk, (long long)cpus,
            (long long)node_cpus, slots_here, load / 100, load % 100, (int)(x % 100),
            (int)(load * slots_here / 100), (load * slots_here) % 100, state, activity,
            (long long)(1700000000 + (int64_t)(x % 86400)), (long long)s->kflops,
            (int)((x >> 40) % 30000), ip2, ip3, ip2, ip3,
            (int)(x % 12), 1 + (int)((x >> 8) % 28), 700000 + (int)(x % 99999), (int)(x % 12),
            (int)((x >> 12) % 200), (long long)(1700086400 + (int64_t)(x % 300)),
            (int)((x >> 16) % 5000), owner ? "; Owner = \"" : "", owner ? owner : "",
            owner ? "\"" : "");
        if (b.failed ||
            ads_record_parse(&slot_records[i], slot_arena, b.p, b.len, NULL) ||
            ads_msgpack_encode_record(&slot_rows[i], slot_records[i], NULL)) {
            ads_buf_free(&b);
            return -1;
        }
        slot_text_bytes += b.len;
        char name[64];
        snprintf(name, sizeof name, "slot%d@node%04d.example.org", slot_in_node, node);
        s->name = slot_strdup(name);
        s->arch = arch, s->opsys = opsys, s->state = state, s->activity = activity;
        s->owner = owner;
        char lt[32];
        snprintf(lt, sizeof lt, "%d.%02d", load / 100, load % 100);
        s->loadavg = strtod(lt, NULL);
        if (!s->name) {
            ads_buf_free(&b);
            return -1;
        }
    }
    ads_buf_free(&b);
    for (int k = 0; k < SLOT_EXPRS; k++) {
        const ads_expr *e;
        if (ads_expr_parse(&e, slot_arena, slot_exprs[k], strlen(slot_exprs[k]), NULL) ||
            ads_expr_prepare(&slot_prepared[k], slot_arena, e, NULL))
            return -1;
    }
    return 0;
}

/* Each result folded into a checksum both sides compute the same way:
 * per expression, the count of true results (the Rank: the sum of its
 * integer values), weighted so a difference in one is not hidden by
 * another. */
static uint64_t slot_fold(uint64_t acc, int k, const ads_value *v)
{
    if (k == 2)
        return acc + (v->type == ADS_INTEGER ? (uint64_t)v->u.i : 0) * 1000003u;
    return acc + (uint64_t)(v->type == ADS_BOOLEAN && v->u.b) * ((uint64_t)1 << (12 * k));
}

static uint64_t slot_counts[2][SLOT_EXPRS]; /* [0] adstore, [1] C: one pass, per expression */

static int slot_eval(uint64_t ops, bool msgpack)
{
    ads_arena *a = ads_arena_new();
    uint64_t acc = 0, n = 0;
    if (!a || make_slots())
        return -1;
    memset(slot_counts[0], 0, sizeof slot_counts[0]);
    for (uint64_t i = 0; n < ops; i++) {
        ads_msgpack_view mv;
        ads_view view;
        if (msgpack) {
            const ads_buf *rb = &slot_rows[i % SLOTS];
            if (ads_msgpack_view_init(&mv, rb->p, rb->len, a, NULL))
                return -1;
            view = ads_msgpack_view_get(&mv, NULL);
        } else {
            view = ads_record_view(slot_records[i % SLOTS], NULL);
        }
        for (int k = 0; k < SLOT_EXPRS && n < ops; k++, n++) {
            ads_value v;
            if (ads_expr_eval(&v, slot_prepared[k], &view, a))
                return -1;
            acc = slot_fold(acc, k, &v);
            if (i < SLOTS)
                slot_counts[0][k] += k == 2 ? (uint64_t)(v.type == ADS_INTEGER ? v.u.i : 0)
                                            : (uint64_t)(v.type == ADS_BOOLEAN && v.u.b);
        }
        if (msgpack || (i & 63) == 63)
            ads_arena_reset(a);
    }
    slot_mine_result = acc;
    sink = acc;
    ads_arena_free(a);
    return 0;
}

static int w_slots_memory(uint64_t ops)
{
    return slot_eval(ops, false);
}

static int w_slots_msgpack(uint64_t ops)
{
    return slot_eval(ops, true);
}

/* ^slot[0-9]+@node0[0-4], by hand. */
static bool slot_name_match(const char *p)
{
    if (strncmp(p, "slot", 4) != 0)
        return false;
    p += 4;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return strncmp(p, "@node0", 6) == 0 && p[6] >= '0' && p[6] <= '4';
}

/* The ceiling: the five written in C over the structs (string == is
 * case-insensitive in ClassAds; regexp is case-sensitive by default). The
 * adstore side runs first with the same ops; the two must agree. */
static int b_slots_c(uint64_t ops)
{
    uint64_t acc = 0, n = 0;
    if (make_slots())
        return -1;
    memset(slot_counts[1], 0, sizeof slot_counts[1]);
    for (uint64_t i = 0; n < ops; i++) {
        const slot *s = &slots[i % SLOTS];
        for (int k = 0; k < SLOT_EXPRS && n < ops; k++, n++) {
            ads_value v = {.type = ADS_BOOLEAN};
            switch (k) {
            case 0:
                v.u.b = s->memory > 1024 && strcasecmp(s->arch, "X86_64") == 0 &&
                        (s->disk >= 100000 || (s->owner && strcasecmp(s->owner, "alice") == 0));
                break;
            case 1:
                v.u.b = strcasecmp(s->opsys, "LINUX") == 0 &&
                        strcasecmp(s->arch, "X86_64") == 0 && s->memory >= 2048 &&
                        s->cpus >= 1 && strcasecmp(s->state, "Unclaimed") == 0;
                break;
            case 2:
                v.type = ADS_INTEGER;
                v.u.i = s->kflops / 1000 + s->memory / 1024;
                break;
            case 3:
                v.u.b = slot_name_match(s->name);
                break;
            default:
                v.u.b = strcasecmp(s->activity, "Idle") == 0 && s->loadavg < 0.3 &&
                        s->total_cpus > 4;
                break;
            }
            acc = slot_fold(acc, k, &v);
            if (i < SLOTS)
                slot_counts[1][k] += k == 2 ? (uint64_t)v.u.i : (uint64_t)v.u.b;
        }
    }
    sink = acc;
    if (acc != slot_mine_result)
        return bench_fail("P9 slot ads", "adstore and the C baseline disagree on the results");
    return 0;
}

/* Once: one full pass of each side, the per-expression counts compared and
 * noted under the table. */
static int slots_check(void)
{
    static bool noted;
    if (noted)
        return 0;
    noted = true;
    if (w_slots_msgpack(SLOTS * SLOT_EXPRS) || b_slots_c(SLOTS * SLOT_EXPRS) ||
        w_slots_memory(SLOTS * SLOT_EXPRS) || b_slots_c(SLOTS * SLOT_EXPRS))
        return -1;
    if (memcmp(slot_counts[0], slot_counts[1], sizeof slot_counts[0]) != 0)
        return bench_fail("P9 slot ads", "per-expression counts differ");
    size_t row_bytes = 0;
    for (int i = 0; i < SLOTS; i++)
        row_bytes += slot_rows[i].len;
    bench_note("P9: %d distinct slot ads (%zu bytes of text, %zu per ad; MessagePack rows %zu "
               "bytes per ad); true results per 10k ads, the same on both sides: P3 %" PRIu64
               ", Requirements-like %" PRIu64 ", regexp(Name) %" PRIu64 ", Idle/LoadAvg %" PRIu64
               "; Rank sums to %" PRIu64 ".",
               SLOTS, slot_text_bytes, slot_text_bytes / SLOTS, row_bytes / SLOTS,
               slot_counts[0][0], slot_counts[0][1], slot_counts[0][3], slot_counts[0][4],
               slot_counts[0][2]);
    return 0;
}


/* ---- driver ---- */

static int run_row(const row *r, const config *cfg)
{
    double mine[32], base[32];
    uint64_t ops = cfg->quick ? r->ops / 20 : r->ops;
    for (int i = 0; i < cfg->reps; i++) {
        double t0 = bench_now();
        if (r->mine(ops))
            return -1;
        double t1 = bench_now();
        if (r->base(ops))
            return -1;
        double t2 = bench_now();
        mine[i] = t1 - t0;
        base[i] = t2 - t1;
    }
    double m = bench_median(mine, cfg->reps), b = bench_median(base, cfg->reps);
    bench_row(r->id, r->what, ops, m, r->baseline, b, r->target_rate, r->target_ratio);
    fflush(stdout);
    return 0;
}

static const row rows[] = {
    {"P7", "OUID generate", "clock_gettime+counter", w_ouid, b_clock_counter, 20000000, 20e6, 0},
    {"P7", "UUID generate (x256)", "getrandom 16B x256", w_uuid_bulk, b_getrandom_bulk, 4000000,
     0, 0},
    {"P7", "UUID generate (x1)", "getrandom 16B", w_uuid_single, b_getrandom_single, 1000000, 0,
     0},
    {"P7", "FLUID generate", "by hand, 1024/ms", w_fluid, b_fluid_minimal, 4000000, 0, 0.9},
    {"P7", "F58 encode", "snprintf %llu", w_f58_enc, b_snprintf, 10000000, 10e6, 0},
    {"P7", "F58 decode", "strtoull", w_f58_dec, b_strtoull, 10000000, 10e6, 0},
    {"P7", "words encode", "snprintf %llu", w_words_enc, b_snprintf, 10000000, 10e6, 0},
    {"P7", "words decode", "strtoull", w_words_dec, b_strtoull, 10000000, 10e6, 0},
    {"P7", "emoji encode", "snprintf %llu", w_emoji_enc, b_snprintf, 10000000, 10e6, 0},
    {"P7", "emoji decode", "strtoull", w_emoji_dec, b_strtoull, 10000000, 10e6, 0},
    {"P9", "parse P3 constraint", "tokenize by hand", w_parse, b_tokenize, 2000000, 1e6, 0},
    {"P9", "eval P3, in memory", "C over structs", w_eval_memory, b_eval_c, 10000000, 10e6, 0},
    {"P9", "eval P3, msgpack bytes", "msgpack-c decode + C", w_eval_msgpack, b_eval_msgpack_c,
     5000000, 5e6, 0},
    {"P9", "10k ads x5, in memory", "C over structs", w_slots_memory, b_slots_c,
     2000000, 0, 0},
    {"P9", "10k ads x5, msgpack", "C over structs", w_slots_msgpack, b_slots_c,
     2000000, 0, 0},
};

void bench_row(const char *id, const char *what, uint64_t ops, double m, const char *baseline,
               double b, double target_rate, double target_ratio)
{
    double rate = (double)ops / m, brate = (double)ops / b, ratio = rate / brate;
    const char *verdict = "-";
    if (target_rate > 0 || target_ratio > 0) {
        bool ok = (target_rate <= 0 || rate >= target_rate) &&
                  (target_ratio <= 0 || ratio >= target_ratio);
        verdict = ok ? "met" : "MISSED";
    }
    char target[64] = "";
    if (target_rate > 0)
        snprintf(target, sizeof target, ">= %.1fM/s", target_rate / 1e6);
    if (target_ratio > 0)
        snprintf(target + strlen(target), sizeof target - strlen(target), "%s>= %.2fx",
                 target[0] ? ", " : "", target_ratio);
    printf("| %-3s | %-24s | %10" PRIu64 " | %8.4f | %8.2fM | %-24s | %8.4f | %8.2fM | %6.2fx | "
           "%-14s | %-6s |\n",
           id, what, ops, m, rate / 1e6, baseline, b, brate / 1e6, ratio,
           target[0] ? target : "-", verdict);
    fflush(stdout);
}

int bench_fail(const char *what, const char *msg)
{
    fprintf(stderr, "adstore-bench: %s: %s\n", what, msg);
    return -1;
}

void bench_rm_rf(const char *path)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s-wal' '%s-shm'", path, path, path);
    if (system(cmd) != 0)
        fprintf(stderr, "adstore-bench: could not remove %s\n", path);
}

uint64_t bench_mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static char notes[65536];

void bench_note(const char *fmt, ...)
{
    va_list ap;
    size_t n = strlen(notes);
    va_start(ap, fmt);
    vsnprintf(notes + n, sizeof notes - n, fmt, ap);
    va_end(ap);
    n = strlen(notes);
    if (n + 1 < sizeof notes)
        notes[n] = '\n', notes[n + 1] = 0;
}

bool bench_selected(const config *cfg, const char *id, const char *what)
{
    return !cfg->only || strncmp(id, cfg->only, strlen(cfg->only)) == 0 ||
           strncmp(what, cfg->only, strlen(cfg->only)) == 0;
}

static int usage(void)
{
    fprintf(stderr, "Usage: adstore-bench [--quick] [--reps N] [--only PREFIX] [--scale N] "
                    "[--dir DIR]\n"
                    "  --quick        small sizes (a smoke run in seconds)\n"
                    "  --reps N       repetitions per row, median reported (1..31, default 5)\n"
                    "  --only PREFIX  only rows whose scenario id or name starts with PREFIX\n"
                    "  --scale N      the realistic scenarios (R*) at N x 1M records (1..100)\n"
                    "  --dir DIR      keep the scenario stores in DIR (default: a temporary\n"
                    "                 directory, removed at the end)\n");
    return 2;
}

int main(int argc, char **argv)
{
    config cfg = {false, 5, NULL, NULL, false, 1};
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            cfg.quick = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            cfg.reps = atoi(argv[++i]);
            if (cfg.reps < 1 || cfg.reps > 31)
                return usage();
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            cfg.only = argv[++i];
        } else if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
            cfg.scale = atoi(argv[++i]);
            if (cfg.scale < 1 || cfg.scale > 100)
                return usage();
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
            cfg.keep = true;
        } else {
            return usage();
        }
    }
    if (cfg.quick && cfg.reps == 5)
        cfg.reps = 3;
    char tmpl[] = "/tmp/adstore-bench-XXXXXX";
    if (!dir && !(dir = mkdtemp(tmpl))) {
        perror("adstore-bench: mkdtemp");
        return 1;
    }
    cfg.dir = dir;
    printf("adstore-bench: %d repetitions, median seconds; %s sizes\n\n", cfg.reps,
           cfg.quick ? "quick" : "full");
    printf("| id  | adstore                  |        ops |  adstore |     rate | baseline       "
           "          | baseline |     rate |  ratio | target         | status |\n");
    printf("|-----|--------------------------|------------|----------|----------|----------------"
           "----------|----------|----------|--------|----------------|--------|\n");
    int failed = 0;
    /* The slot ads are generated, parsed and cross-checked before any
     * timing (the setup is not part of the P9 rows' figures). */
    if (bench_selected(&cfg, "P9", "10k ads") && slots_check()) {
        fprintf(stderr, "adstore-bench: P9 slot ads failed\n");
        failed = 1;
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        if (!bench_selected(&cfg, r->id, r->what))
            continue;
        if (run_row(r, &cfg)) {
            fprintf(stderr, "adstore-bench: %s %s failed\n", r->id, r->what);
            failed = 1;
        }
    }
    if (bench_engine(&cfg))
        failed = 1;
    if (bench_query(&cfg))
        failed = 1;
    if (bench_tools(&cfg))
        failed = 1;
    if (bench_history(&cfg))
        failed = 1;
    if (bench_real(&cfg))
        failed = 1;
    if (bench_index(&cfg))
        failed = 1;
    if (bench_commit(&cfg))
        failed = 1;
    if (notes[0])
        printf("\n%s", notes);
    if (dir == tmpl) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
        if (system(cmd) != 0)
            fprintf(stderr, "adstore-bench: could not remove %s\n", tmpl);
    }
    return failed;
}
