/*
 * idgen/clockseq.c: the OUID clock-sequence state machine.
 *
 * Two tracks per node, current and backfill, each with a sequence counter k
 * and the union of the seconds it issued ids for under k. A current id whose
 * second falls before the track's range means the clock went back: take a new
 * k. A backfill batch whose range overlaps the track's range takes a new k;
 * a disjoint one widens the range. The low bit of the clock sequence tells
 * current (1) from backfill (0) ids, so the two never collide.
 *
 * Everything here works on a state value owned by the caller; the engine
 * reads and writes it inside its write transactions. ads_ouid_gen wraps a
 * state for programs without a store and notices fork().
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "idgen/idgen.h"

#define STATE_VERSION 1

void ads_idgen_state_init(ads_idgen_state *st, uint64_t node)
{
    memset(st, 0, sizeof *st);
    st->node = node & ((UINT64_C(1) << 47) - 1);
}

/* ---- serialisation: fixed-width little-endian ---- */

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* k:2 used:1 lo:8 hi:8 last_t:8 last_c:4 = 31 bytes a track */
static uint8_t *put_track(uint8_t *p, const ads_clock_track *t)
{
    *p++ = (uint8_t)(t->k & 0xff);
    *p++ = (uint8_t)(t->k >> 8);
    *p++ = t->used ? 1 : 0;
    p = put_u64(p, t->lo);
    p = put_u64(p, t->hi);
    p = put_u64(p, t->last_t);
    return put_u32(p, t->last_c);
}

static int get_track(ads_clock_track *t, const uint8_t *p, const char *name, ads_error *err)
{
    t->k = (uint16_t)(p[0] | p[1] << 8);
    t->used = p[2] != 0;
    t->lo = get_u64(p + 3);
    t->hi = get_u64(p + 11);
    t->last_t = get_u64(p + 19);
    t->last_c = get_u32(p + 27);
    if (t->k > ADS_CLOCKSEQ_K_MAX || p[2] > 1 || t->lo > t->hi || t->hi > ADS_OUID_TIME_MAX ||
        t->last_c > ADS_OUID_COUNTER_MAX)
        return ads_error_set(err, ADS_ECORRUPT,
                             "identifier state: %s track holds impossible values", name);
    return 0;
}

void ads_idgen_state_encode(uint8_t out[ADS_IDGEN_STATE_BYTES], const ads_idgen_state *st)
{
    uint8_t *p = out;
    *p++ = STATE_VERSION;
    p = put_u64(p, st->node);
    p = put_track(p, &st->current);
    p = put_track(p, &st->backfill);
    put_u32(p, st->steps_back);
}

int ads_idgen_state_decode(ads_idgen_state *out, const uint8_t *in, size_t len,
                           ads_error *err)
{
    ads_idgen_state st;
    int rc;
    if (len < 1)
        return ads_error_set(err, ADS_ECORRUPT, "identifier state: empty");
    if (in[0] != STATE_VERSION)
        return ads_error_set(err, ADS_EVERSION,
                             "identifier state: version %u, this build reads version %u",
                             (unsigned)in[0], STATE_VERSION);
    if (len != ADS_IDGEN_STATE_BYTES)
        return ads_error_set(err, ADS_ECORRUPT,
                             "identifier state: %zu bytes, expected %d", len,
                             ADS_IDGEN_STATE_BYTES);
    st.node = get_u64(in + 1);
    if (st.node >> 47)
        return ads_error_set(err, ADS_ECORRUPT, "identifier state: node over 47 bits");
    if ((rc = get_track(&st.current, in + 9, "current", err)) ||
        (rc = get_track(&st.backfill, in + 40, "backfill", err)))
        return rc;
    st.steps_back = get_u32(in + 71);
    *out = st;
    return 0;
}

/* ---- current ids ---- */

static ads_id make_ouid(uint64_t t, uint32_t c, bool backfill, uint64_t node, uint16_t k)
{
    ads_id id;
    id.hi = (t << 28) | ((uint64_t)c << 4) | (backfill ? 9u : 1u);
    id.lo = (node << 16) | (uint64_t)((k << 1) | (backfill ? 0u : 1u));
    return id;
}

/* The pure step: 0, ADS_IDGEN_CLOCK_STEPPED_BACK, or ADS_ELIMIT (counter of
 * second now used up; nothing changed). now is already range-checked. */
static int next_current(ads_id *out, ads_idgen_state *st, uint64_t now)
{
    ads_clock_track *t = &st->current;
    int event = 0;
    uint32_t c;

    if (!t->used) {
        t->used = true;
        t->lo = t->hi = now;
        c = 0;
    } else if (now > t->hi) {
        t->hi = now;
        c = 0;
    } else if (now == t->hi) {
        if (t->last_c >= ADS_OUID_COUNTER_MAX)
            return ADS_ELIMIT;
        c = t->last_c + 1;
    } else {
        t->k = (uint16_t)((t->k + 1) & ADS_CLOCKSEQ_K_MAX);
        t->lo = t->hi = now;
        st->steps_back++;
        c = 0;
        event = ADS_IDGEN_CLOCK_STEPPED_BACK;
    }
    t->last_t = now;
    t->last_c = c;
    *out = make_ouid(now, c, false, st->node, t->k);
    return event;
}

int ads_ouid_next_at(ads_id *out, ads_idgen_state *st, uint64_t now, ads_error *err)
{
    if (now > ADS_OUID_TIME_MAX)
        return ads_error_set(err, ADS_ERANGE, "OUID time %llu does not fit 36 bits",
                             (unsigned long long)now);
    int rc = next_current(out, st, now);
    if (rc == ADS_ELIMIT)
        return ads_error_set(err, ADS_ELIMIT,
                             "OUID counter for second %llu is used up (16777216 ids)",
                             (unsigned long long)now);
    return rc;
}

int ads_ouid_next(ads_id *out, ads_idgen_state *st, const ads_clock *clock, ads_error *err)
{
    if (!clock)
        clock = ads_clock_system();
    for (;;) {
        int64_t ns = clock->now_ns(clock->ctx);
        if (ns < 0 || (uint64_t)ns / 1000000000u > ADS_OUID_TIME_MAX)
            return ads_error_set(err, ADS_ERANGE,
                                 "clock reads %lld ns, outside what an OUID can date",
                                 (long long)ns);
        int rc = next_current(out, st, (uint64_t)ns / 1000000000u);
        if (rc != ADS_ELIMIT)
            return rc;
        /* 2^24 ids in this second: wait for the next one, never reuse. */
        clock->sleep_ns(clock->ctx, 1000000000 - ns % 1000000000);
    }
}

/* ---- backfill batches ---- */

typedef struct second_count {
    uint64_t key; /* second + 1; 0 = empty slot */
    uint32_t count;
} second_count;

struct ads_backfill {
    uint64_t lo, hi;
    uint16_t k;
    size_t cap, used; /* cap is a power of two */
    second_count *slots;
};

int ads_backfill_begin(ads_backfill **out, ads_idgen_state *st, uint64_t lo, uint64_t hi,
                       ads_error *err)
{
    if (lo > hi)
        return ads_error_set(err, ADS_EINVAL, "backfill range [%llu, %llu] is reversed",
                             (unsigned long long)lo, (unsigned long long)hi);
    if (hi > ADS_OUID_TIME_MAX)
        return ads_error_set(err, ADS_ERANGE, "backfill time %llu does not fit 36 bits",
                             (unsigned long long)hi);
    ads_backfill *b = calloc(1, sizeof *b);
    if (!b)
        return ads_error_set(err, ADS_ENOMEM, "backfill batch: out of memory");
    b->cap = 64;
    b->slots = calloc(b->cap, sizeof *b->slots);
    if (!b->slots) {
        free(b);
        return ads_error_set(err, ADS_ENOMEM, "backfill batch: out of memory");
    }

    ads_clock_track *t = &st->backfill;
    if (!t->used) {
        t->used = true;
        t->lo = lo;
        t->hi = hi;
    } else if (lo <= t->hi && hi >= t->lo) {
        t->k = (uint16_t)((t->k + 1) & ADS_CLOCKSEQ_K_MAX);
        t->lo = lo;
        t->hi = hi;
    } else {
        if (lo < t->lo)
            t->lo = lo;
        if (hi > t->hi)
            t->hi = hi;
    }
    b->lo = lo;
    b->hi = hi;
    b->k = t->k; /* the batch keeps its k even if another batch begins */
    *out = b;
    return 0;
}

static size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & (cap - 1);
}

static int grow(ads_backfill *b)
{
    size_t cap = b->cap * 2;
    second_count *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return ADS_ENOMEM;
    for (size_t i = 0; i < b->cap; i++) {
        if (!b->slots[i].key)
            continue;
        size_t j = slot_of(b->slots[i].key, cap);
        while (slots[j].key)
            j = (j + 1) & (cap - 1);
        slots[j] = b->slots[i];
    }
    free(b->slots);
    b->slots = slots;
    b->cap = cap;
    return 0;
}

int ads_backfill_next(ads_id *out, ads_backfill *b, ads_idgen_state *st, uint64_t t, ads_error *err)
{
    if (t < b->lo || t > b->hi)
        return ads_error_set(err, ADS_ERANGE,
                             "backfill time %llu is outside the batch's range [%llu, %llu]",
                             (unsigned long long)t, (unsigned long long)b->lo,
                             (unsigned long long)b->hi);
    uint64_t key = t + 1;
    size_t j = slot_of(key, b->cap);
    while (b->slots[j].key && b->slots[j].key != key)
        j = (j + 1) & (b->cap - 1);
    if (!b->slots[j].key) {
        if ((b->used + 1) * 2 > b->cap) {
            if (grow(b))
                return ads_error_set(err, ADS_ENOMEM, "backfill batch: out of memory");
            j = slot_of(key, b->cap);
            while (b->slots[j].key)
                j = (j + 1) & (b->cap - 1);
        }
        b->slots[j].key = key;
        b->slots[j].count = 0;
        b->used++;
    }
    uint32_t c = b->slots[j].count;
    if (c > ADS_OUID_COUNTER_MAX)
        return ads_error_set(err, ADS_ELIMIT,
                             "backfill batch made 16777216 ids in second %llu; split the "
                             "batch",
                             (unsigned long long)t);
    b->slots[j].count = c + 1;
    st->backfill.last_t = t;
    st->backfill.last_c = c;
    *out = make_ouid(t, c, true, st->node, b->k);
    return 0;
}

void ads_backfill_end(ads_backfill *b)
{
    if (!b)
        return;
    free(b->slots);
    free(b);
}

/* ---- the in-memory generator ---- */

/*
 * Fork detection without a system call per id: a page marked
 * MADV_WIPEONFORK reads as zeros in a child. Where the kernel lacks it, the
 * generator compares getpid() instead (slower, still correct).
 */
struct ads_ouid_gen {
    ads_idgen_state st;
    ads_clock clock;
    volatile unsigned char *armed; /* wipe-on-fork page, or NULL */
    pid_t pid;
};

static void arm(ads_ouid_gen *g)
{
    if (g->armed)
        g->armed[0] = 1;
    g->pid = getpid();
}

static bool forked(const ads_ouid_gen *g)
{
    if (g->armed)
        return g->armed[0] == 0;
    return getpid() != g->pid;
}

int ads_ouid_gen_new(ads_ouid_gen **out, const ads_idgen_state *initial,
                     const ads_clock *clock, ads_error *err)
{
    ads_ouid_gen *g = calloc(1, sizeof *g);
    if (!g)
        return ads_error_set(err, ADS_ENOMEM, "OUID generator: out of memory");
    if (initial) {
        g->st = *initial;
    } else {
        uint64_t node;
        int rc = ads_node_new(&node, err);
        if (rc) {
            free(g);
            return rc;
        }
        ads_idgen_state_init(&g->st, node);
    }
    g->clock = clock ? *clock : *ads_clock_system();
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p != MAP_FAILED) {
#ifdef MADV_WIPEONFORK
        if (madvise(p, (size_t)page, MADV_WIPEONFORK) == 0)
            g->armed = p;
        else
#endif
            munmap(p, (size_t)page);
    }
    arm(g);
    *out = g;
    return 0;
}

int ads_ouid_gen_next(ads_id *out, ads_ouid_gen *g, ads_error *err)
{
    if (forked(g)) {
        /* A child is a new node: it must not continue the parent's sequence. */
        uint64_t node;
        int rc = ads_node_new(&node, err);
        if (rc)
            return rc;
        ads_idgen_state_init(&g->st, node);
        arm(g);
    }
    return ads_ouid_next(out, &g->st, &g->clock, err);
}

void ads_ouid_gen_state(ads_idgen_state *out, const ads_ouid_gen *g)
{
    *out = g->st;
}

void ads_ouid_gen_free(ads_ouid_gen *g)
{
    if (!g)
        return;
    if (g->armed)
        munmap((void *)g->armed, (size_t)sysconf(_SC_PAGESIZE));
    free(g);
}
