/*
 * tests/engine/test_model.c: a randomised model test of the store. A plain
 * in-memory model of the timeline rules (shared/spec/datastore.md section 3
 * and the engine's documented choices) lives in this file: records keyed by
 * their folded key, each a list of rows (attributes, _Timestamp and its zone,
 * write order, _Deleted) kept in (_Timestamp, write order) order. Random
 * transactions of stores (merge, undefined removes, backfill into the past,
 * future dates, _Deleted), deletes, undeletes and updates through
 * ads_txn_put_row, purges, and rewrites during a scan run through the public
 * API and through the model on a fake clock that moves forwards, stands still
 * and steps back between transactions; some transactions are aborted and the
 * model rolls back too.
 * After every step the whole store is compared with the model: scans of the
 * latest rows (with and without deleted ones), history scans, every record's
 * history, point lookups under differently spelled keys, the type counts and
 * the order of __SystemTimestamp; every few steps ads_db_verify must find
 * nothing wrong.
 *
 * History is kept in chunks of rows (engine/hput.c); most seeds set
 * ADSTORE_TEST_CHUNK_ROWS to 1, 2 or 3 so that chunk boundaries fall
 * everywhere, and one seed in four begins as a format-6 store, one row per
 * entry kept as differences (engine/history.c; two seeds in three set
 * ADSTORE_TEST_KEYFRAME_ROWS to 2 or 3 so that short histories meet every
 * keyframe rule), which chunks take over half way through.
 *
 * A mismatch prints the seed, the step and the log of operations, and fails.
 * Replay one seed with ADS_MODEL_SEED=n (ADS_MODEL_STEPS=m to change the
 * length; ADS_MODEL_SEEDS=k to run seeds 1..k).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "tests/cli/run.h"
#include "tests/engine/helpers.h"

#define T0_MS INT64_C(1700000000000) /* 2023-11-14T22:13:20Z */
#define DEFAULT_SEEDS 200
#define DEFAULT_STEPS 60
#define VERIFY_EVERY 10
#define REOPEN_EVERY 20 /* close and open the store again: what was committed stays */

/* ---- the key spaces of the three types ---- */

enum { TY_HOST, TY_PAIR, TY_LOG, TY_EVT, NTYPES };
static const char *const type_names[NTYPES] = {"Host", "Pair", "Log", "Evt"};
/* Log is declared with KeepUnchangedRows = true: a store equal to the row in
 * effect appends a row anyway; the others append nothing then. */
static const bool keep_unchanged[NTYPES] = {false, false, true, false};

/* Host: keyed by Name, a string whose case varies. Names sorted by their
 * folded bytes; the last two are longer than the engine keeps inline. */
#define NHOST 9
#define NHOST_SHORT 7
static const char *const host_short[NHOST_SHORT] = {"alpha", "beta", "gamma7", "node10",
                                                    "node9", "x",    "zz"};

/* Pair: keyed by { A, B }: A a number spelled as integer, real or boolean
 * (equal under ===), B a string whose case varies. Classes sorted by value. */
#define NPAIR_A 4
#define NPAIR_B 2
static const char *const pair_a[NPAIR_A][3] = {
    {"-2.5", NULL, NULL}, {"0", "0.0", "false"}, {"1", "1.0", "true"}, {"123", "123.0", NULL}};
static const double pair_a_value[NPAIR_A] = {-2.5, 0, 1, 123};
static const char *const pair_b[NPAIR_B] = {"k", "mn"};

/* Log: keyless, keyed by the Id the store appends (#1, #2, ...), or by an Id
 * given, now and then past every number handed out: the next generated Id
 * comes after it. Evt: keyless with AutoGenerateKey, keyed by OUIDs the store
 * generates or that are given, now and then the very OUID the generator
 * would make next: the generated key must skip it. */

static const char *const plain_names[] = {"Memory", "Disk", "Cpus", "State", "Owner", "Rank"};
#define NPLAIN (sizeof plain_names / sizeof plain_names[0])

/* Attribute values given to stores (canonicalised through parse + unparse). */
static const char *const value_texts[] = {"1",
                                          "2",
                                          "-7",
                                          "2.5",
                                          "123.0",
                                          "1e30",
                                          "\"abc\"",
                                          "\"ABC\"",
                                          "\"\"",
                                          "true",
                                          "false",
                                          "{ 1, \"x\", { } }",
                                          "[ a = 1; b = \"q\" ]",
                                          "Memory * 2",
                                          "Nope + 1",
                                          "`2020-01-02T03:04:05Z`",
                                          "`1:00:00`",
                                          "error",
                                          "#42",
                                          "strcat(\"a\", Owner)"};
#define NVALUES (sizeof value_texts / sizeof value_texts[0])

static const int32_t zone_offsets[] = {0, 3600, -18000, 19800};

/* ---- the model ---- */

#define MAX_ATTRS 16

typedef struct mattr {
    const char *name; /* as spelled by the write that set it */
    const char *val;  /* canonical text of the expression */
} mattr;

typedef struct mrow {
    mattr a[MAX_ATTRS];
    int n;
    double ts;
    int32_t off;
    uint64_t seq; /* write order: the model's __SystemTimestamp */
    bool del;
} mrow;

typedef struct mrec {
    int type;
    uint64_t kid; /* host index, pair class a * NPAIR_B + b, or the Log Id */
    mrow *rows;   /* sorted by (ts, seq); the last is latest */
    size_t n, cap;
} mrec;

typedef struct model {
    mrec *recs;
    size_t n, cap;
} model;

/* What one comparison learnt of the row of each write when it checked the
 * row in full: the other reads of that row must return the same. */
typedef struct seen_row {
    uint64_t gen; /* the comparison that filled it */
    int64_t systs;
    uint64_t hash; /* of the row's MessagePack bytes */
    /* The last time the row was decoded and compared attribute by attribute
     * (in this seed): its bytes and __Latest then. The same bytes need not be
     * decoded again. */
    bool decoded;
    uint64_t dec_hash;
    bool dec_latest;
} seen_row;

/* The stored key of a record as reads return it (row->key), learnt from its
 * lookup in this comparison: scans find their record by it. */
typedef struct key_seen {
    int type;
    uint64_t kid;
    unsigned char *key;
    size_t len;
} key_seen;

typedef struct mt {
    uint64_t seed, rng;
    int step;
    ads_db *db;
    char *dir;
    char path[1100];
    int64_t ns;    /* the fake clock */
    ads_arena *sa; /* interned strings of this seed */
    ads_arena *ra; /* scratch for one comparison or one operation */
    model m;
    uint64_t seq;
    /* The last Log Id handed out. Not rolled back with an aborted
     * transaction: values a generator handed out stay handed out (engine/db.c,
     * abandon()), so the next record gets the next number. */
    uint64_t log_last;
    /* The Evt keys met so far (a record's kid is its index); the first is
     * an OUID of another node, never stored unless a store picks it. */
    ads_id *evt;
    size_t nevt, capevt;
    ads_buf log;
    char why[4096];
    char *hosts[NHOST];
    const char *values[NVALUES]; /* canonical texts */
    seen_row *seen;              /* by write number */
    size_t capseen;
    key_seen *keys;
    size_t nkeys, capkeys;
    uint64_t gen;
    const ads_expr *tl_query; /* the timeline attributes, read through a row's view */
    bool *visited;
    size_t nvisited;
    uint64_t ops, rows_checked, unchanged, trims; /* statistics */
} mt;

/* ---- small things ---- */

static uint64_t rnd(mt *c)
{
    uint64_t z = (c->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint32_t below(mt *c, uint32_t n)
{
    return (uint32_t)(rnd(c) % n);
}

static bool chance(mt *c, int pct)
{
    return (int)below(c, 100) < pct;
}

/* A copy of s in arena a (the seed's arena for what the model keeps, the
 * scratch arena for what one comparison needs). */
static const char *intern_in(ads_arena *a, const char *s)
{
    char *p = ads_arena_strndup(a, s, strlen(s));
    assert_non_null(p);
    return p;
}

static const char *intern(mt *c, const char *s)
{
    return intern_in(c->sa, s);
}

/* s with the case of each letter drawn at random, copied into arena a. */
static const char *spell_in(mt *c, const char *s, ads_arena *a)
{
    size_t n = strlen(s);
    char *p = ads_arena_strndup(a, s, n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (ch >= 'a' && ch <= 'z' && chance(c, 50))
            p[i] = (char)(ch - 32);
        else if (ch >= 'A' && ch <= 'Z' && chance(c, 50))
            p[i] = (char)(ch + 32);
    }
    return p;
}

static const char *spell(mt *c, const char *s)
{
    return spell_in(c, s, c->sa);
}

static void logf_(mt *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(mt *c, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ads_buf_adds(&c->log, line);
}

static void why(mt *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(mt *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

/* Put where it happened in front of the reason (only when something failed:
 * formatting every row's whereabouts costs more than checking it). */
static void context(mt *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void context(mt *c, const char *fmt, ...)
{
    char all[512 + sizeof c->why];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(all, 512, fmt, ap);
    va_end(ap);
    size_t at = n < 0 ? 0 : (size_t)n < 510 ? (size_t)n : 510;
    all[at++] = ':';
    all[at++] = ' ';
    size_t len = strlen(c->why);
    memcpy(all + at, c->why, len + 1);
    len += at;
    if (len >= sizeof c->why)
        len = sizeof c->why - 1;
    memcpy(c->why, all, len);
    c->why[len] = 0;
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            why(c, __VA_ARGS__);                                                                   \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static double now_secs(const mt *c)
{
    return (double)c->ns / 1e9; /* as the engine reads its clock */
}

static int64_t clock_now(void *ctx)
{
    return ((mt *)ctx)->ns;
}

static void clock_sleep(void *ctx, int64_t ns)
{
    ((mt *)ctx)->ns += ns;
}

static void set_clock(mt *c)
{
    ads_clock clk = {clock_now, clock_sleep, c};
    ads_db_set_clock(c->db, &clk);
}

static const char *unparse_expr(ads_arena *a, const ads_expr *e)
{
    ads_buf b = ADS_BUF_INIT;
    ads_expr_unparse(&b, e);
    const char *s = intern_in(a, ads_buf_cstr(&b));
    ads_buf_free(&b);
    return s;
}

static const char *unparse_value(ads_arena *a, const ads_value *v)
{
    ads_buf b = ADS_BUF_INIT;
    ads_value_unparse(&b, v);
    const char *s = intern_in(a, ads_buf_cstr(&b));
    ads_buf_free(&b);
    return s;
}

/* The value of a key's text: the simple literals this test spells directly
 * (lookups are many), anything else through the parser. */
static ads_value eval_text(mt *c, const char *text, ads_arena *a)
{
    size_t n = strlen(text);
    if (n >= 2 && text[0] == '"' && text[n - 1] == '"' && !memchr(text + 1, '\\', n - 2))
        return ads_string(text + 1, n - 2); /* text outlives the value: it is interned */
    if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)
        return ads_bool(text[0] == 't');
    if (text[0] == '#' && n > 1 && strspn(text + 1, "0123456789") == n - 1)
        return ads_ident(ads_luid(strtoull(text + 1, NULL, 10)));
    if (n && strspn(text, "-0123456789") == n)
        return ads_int(strtoll(text, NULL, 10));
    if (n && strspn(text, "-0123456789.") == n)
        return ads_real(strtod(text, NULL));
    const ads_expr *e;
    ads_value v;
    ads_error err;
    if (ads_expr_parse(&e, a, text, strlen(text), &err))
        fail_msg("parse %s: %s", text, err.message);
    assert_int_equal(ads_expr_eval(&v, e, NULL, a), 0);
    (void)c;
    return v;
}

/* ---- the model's operations ---- */

static void rec_free(mrec *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n = r->cap = 0;
}

static void model_free(model *m)
{
    for (size_t i = 0; i < m->n; i++)
        rec_free(&m->recs[i]);
    free(m->recs);
    memset(m, 0, sizeof *m);
}

static void model_copy(model *dst, const model *src)
{
    memset(dst, 0, sizeof *dst);
    dst->n = dst->cap = src->n;
    dst->recs = calloc(src->n ? src->n : 1, sizeof *dst->recs);
    assert_non_null(dst->recs);
    for (size_t i = 0; i < src->n; i++) {
        mrec *d = &dst->recs[i];
        const mrec *s = &src->recs[i];
        *d = *s;
        d->cap = s->n ? s->n : 1;
        d->rows = malloc(d->cap * sizeof *d->rows);
        assert_non_null(d->rows);
        memcpy(d->rows, s->rows, s->n * sizeof *s->rows);
    }
}

static mrec *model_find(model *m, int type, uint64_t kid)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->recs[i].type == type && m->recs[i].kid == kid)
            return &m->recs[i];
    return NULL;
}

static mrec *model_add(model *m, int type, uint64_t kid)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->recs = realloc(m->recs, m->cap * sizeof *m->recs);
        assert_non_null(m->recs);
    }
    mrec *r = &m->recs[m->n++];
    memset(r, 0, sizeof *r);
    r->type = type;
    r->kid = kid;
    return r;
}

static void model_remove(model *m, mrec *r)
{
    size_t i = (size_t)(r - m->recs);
    rec_free(r);
    memmove(&m->recs[i], &m->recs[i + 1], (m->n - i - 1) * sizeof *m->recs);
    m->n--;
}

static const mrow *latest_of(const mrec *r)
{
    return r && r->n ? &r->rows[r->n - 1] : NULL;
}

/* Where a row dated ts goes: after every row with _Timestamp <= ts (its
 * write is the newest, so it follows all ties). */
static size_t insert_pos(const mrec *r, double ts)
{
    size_t pos = 0;
    while (pos < r->n && r->rows[pos].ts <= ts)
        pos++;
    return pos;
}

static void rec_insert(mrec *r, size_t pos, const mrow *row)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->rows = realloc(r->rows, r->cap * sizeof *r->rows);
        assert_non_null(r->rows);
    }
    memmove(&r->rows[pos + 1], &r->rows[pos], (r->n - pos) * sizeof *r->rows);
    r->rows[pos] = *row;
    r->n++;
}

static int attr_find(const mrow *row, const char *name)
{
    for (int i = 0; i < row->n; i++)
        if (strcasecmp(row->a[i].name, name) == 0)
            return i;
    return -1;
}

/* Lay attribute name = val over row (val NULL: remove it). */
static void attr_set(mrow *row, const char *name, const char *val)
{
    int i = attr_find(row, name);
    if (!val) {
        if (i >= 0) {
            memmove(&row->a[i], &row->a[i + 1], (size_t)(row->n - i - 1) * sizeof row->a[0]);
            row->n--;
        }
        return;
    }
    if (i < 0) {
        assert_true(row->n < MAX_ATTRS);
        i = row->n++;
    }
    row->a[i].name = name;
    row->a[i].val = val;
}

/* The date of a row written without _Timestamp: now, or the latest row's
 * date (and zone) if that is later. */
static void default_ts(const mt *c, const mrec *r, double *ts, int32_t *off)
{
    const mrow *l = latest_of(r);
    double now = now_secs(c);
    if (l && l->ts > now) {
        *ts = l->ts;
        *off = l->off;
    } else {
        *ts = now;
        *off = 0;
    }
}

/* A write's expectations, compared with ads_write_info. */
typedef struct expect {
    bool latest, created, changed;
    bool same; /* a store equal to the row in effect: nothing appended */
    double ts;
} expect;

/* Do two rows hold the same attributes, spelled the same, and _Deleted? */
static bool rows_same(const mrow *a, const mrow *b)
{
    if (a->n != b->n || a->del != b->del)
        return false;
    for (int i = 0; i < a->n; i++) {
        int j = attr_find(b, a->a[i].name);
        if (j < 0 || strcmp(a->a[i].name, b->a[j].name) != 0 ||
            strcmp(a->a[i].val, b->a[j].val) != 0)
            return false;
    }
    return true;
}

/* Append a row to r: merged with the row in effect at its date (STORE) or
 * exactly the given attributes (UPDATE, DELETE). */
static expect model_write(mt *c, mrec *r, const mattr *given, int ng, bool merge, bool has_ts,
                          double ts, int32_t off, bool del)
{
    expect x = {0};
    if (!has_ts)
        default_ts(c, r, &ts, &off);
    size_t pos = insert_pos(r, ts);
    mrow row;
    memset(&row, 0, sizeof row);
    if (merge && pos > 0 && !r->rows[pos - 1].del)
        row = r->rows[pos - 1];
    for (int i = 0; i < ng; i++)
        attr_set(&row, given[i].name, given[i].val);
    row.ts = ts;
    row.off = off;
    row.del = del;
    x.latest = pos == r->n;
    if (merge && pos > 0 && !keep_unchanged[r->type] && rows_same(&row, &r->rows[pos - 1])) {
        /* the row in effect at ts stays in effect */
        x.same = true;
        x.ts = r->rows[pos - 1].ts;
        return x;
    }
    row.seq = ++c->seq;
    x.created = x.latest && (r->n == 0 || r->rows[r->n - 1].del) && !del;
    x.changed = true;
    x.ts = ts;
    rec_insert(r, pos, &row);
    return x;
}

/* ---- spelling keys ---- */

static int type_nkeys(int type)
{
    return type == TY_PAIR ? 2 : 1;
}

static const char *key_name(int type, int i)
{
    if (type == TY_HOST)
        return "Name";
    if (type == TY_PAIR)
        return i ? "B" : "A";
    return "Id";
}

/* The text of key attribute i of record kid, spelled at random. */
static const char *key_text(mt *c, int type, uint64_t kid, int i, ads_arena *a)
{
    char buf[1100];
    if (type == TY_HOST) {
        snprintf(buf, sizeof buf, "\"%s\"", spell_in(c, c->hosts[kid], a));
    } else if (type == TY_PAIR && i == 0) {
        const char *const *sp = pair_a[kid / NPAIR_B];
        int n = 0;
        while (n < 3 && sp[n])
            n++;
        snprintf(buf, sizeof buf, "%s", sp[below(c, (uint32_t)n)]);
    } else if (type == TY_PAIR) {
        snprintf(buf, sizeof buf, "\"%s\"", spell_in(c, pair_b[kid % NPAIR_B], a));
    } else if (type == TY_EVT) {
        ads_id_format(buf, c->evt[kid]);
    } else {
        snprintf(buf, sizeof buf, "#%llu", (unsigned long long)kid);
    }
    return intern_in(a, buf);
}

static uint32_t key_space(const mt *c, int type)
{
    if (type == TY_HOST)
        return NHOST;
    if (type == TY_PAIR)
        return NPAIR_A * NPAIR_B;
    if (type == TY_EVT)
        return (uint32_t)c->nevt;
    return (uint32_t)c->log_last;
}

/* Whether records of the type are scanned in kid order (long Host names are
 * stored under a hash: they sort apart; Evt kids are in the order met). */
static bool kid_ordered(int type, uint64_t kid)
{
    return type != TY_EVT && (type != TY_HOST || kid < NHOST_SHORT);
}

/* The kid of Evt key id, added if new. */
static uint64_t evt_kid(mt *c, ads_id id)
{
    for (size_t i = 0; i < c->nevt; i++)
        if (c->evt[i].hi == id.hi && c->evt[i].lo == id.lo)
            return i;
    if (c->nevt == c->capevt) {
        c->capevt = c->capevt ? 2 * c->capevt : 64;
        c->evt = realloc(c->evt, c->capevt * sizeof *c->evt);
        assert_non_null(c->evt);
    }
    c->evt[c->nevt] = id;
    return c->nevt++;
}

/* ---- reading rows back ---- */

static int timeline_attr(ads_str n)
{
    static const char *const names[4] = {"_Timestamp", "__SystemTimestamp", "__Latest", "_Deleted"};
    for (int i = 0; i < 4; i++)
        if (n.len == strlen(names[i]) && strncasecmp(n.p, names[i], n.len) == 0)
            return i;
    return -1;
}

static uint64_t bytes_hash(const unsigned char *p, size_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * UINT64_C(1099511628211);
    return h;
}

static seen_row *seen_of(mt *c, uint64_t seq)
{
    if (seq >= c->capseen) {
        size_t cap = c->capseen ? c->capseen : 256;
        while (cap <= seq)
            cap *= 2;
        c->seen = realloc(c->seen, cap * sizeof *c->seen);
        assert_non_null(c->seen);
        memset(c->seen + c->capseen, 0, (cap - c->capseen) * sizeof *c->seen);
        c->capseen = cap;
    }
    return &c->seen[seq];
}

/* The kid of a row, from its key values; checks they are the row's own key
 * attribute values. */
static bool row_kid(mt *c, ads_row *row, int type, const mrow *m, uint64_t *kid)
{
    bool ok = false;
    ads_value kv;
    ads_error err;
    int rc = ads_row_key_values(&kv, row, c->ra, &err);
    CHECK(rc == 0, "ads_row_key_values: %d %s", rc, err.message);
    CHECK(kv.type == ADS_LIST && kv.u.list.n == (size_t)type_nkeys(type),
          "key values of a %s row: %s", type_names[type], unparse_value(c->ra, &kv));
    const ads_value *k = kv.u.list.items;
    if (type == TY_HOST) {
        CHECK(k[0].type == ADS_STRING, "Host key %s", unparse_value(c->ra, &k[0]));
        uint64_t i;
        for (i = 0; i < NHOST; i++)
            if (strlen(c->hosts[i]) == k[0].u.s.len &&
                strncasecmp(c->hosts[i], k[0].u.s.p, k[0].u.s.len) == 0)
                break;
        CHECK(i < NHOST, "Host key %s is none the test stored", unparse_value(c->ra, &k[0]));
        *kid = i;
    } else if (type == TY_PAIR) {
        double a = 0;
        if (k[0].type == ADS_BOOLEAN)
            a = k[0].u.b;
        else if (k[0].type == ADS_INTEGER)
            a = (double)k[0].u.i;
        else if (k[0].type == ADS_REAL)
            a = k[0].u.r;
        else
            CHECK(false, "Pair key A %s", unparse_value(c->ra, &k[0]));
        uint64_t ia, ib;
        for (ia = 0; ia < NPAIR_A && pair_a_value[ia] != a; ia++)
            ;
        CHECK(ia < NPAIR_A && k[1].type == ADS_STRING, "Pair key %s", unparse_value(c->ra, &kv));
        for (ib = 0; ib < NPAIR_B; ib++)
            if (strlen(pair_b[ib]) == k[1].u.s.len &&
                strncasecmp(pair_b[ib], k[1].u.s.p, k[1].u.s.len) == 0)
                break;
        CHECK(ib < NPAIR_B, "Pair key %s", unparse_value(c->ra, &kv));
        *kid = ia * NPAIR_B + ib;
    } else if (type == TY_EVT) {
        CHECK(k[0].type == ADS_IDENT, "Evt key %s is not an id", unparse_value(c->ra, &k[0]));
        uint64_t i;
        for (i = 0; i < c->nevt; i++)
            if (c->evt[i].hi == k[0].u.id.hi && c->evt[i].lo == k[0].u.id.lo)
                break;
        CHECK(i < c->nevt, "Evt key %s is none the test met", unparse_value(c->ra, &k[0]));
        *kid = i;
    } else {
        CHECK(k[0].type == ADS_IDENT && k[0].u.id.hi == 0 && k[0].u.id.lo > 0,
              "Log key %s is not a LUID", unparse_value(c->ra, &k[0]));
        *kid = k[0].u.id.lo;
    }
    if (m) {
        for (int i = 0; i < type_nkeys(type); i++) {
            int j = attr_find(m, key_name(type, i));
            const char *got = unparse_value(c->ra, &k[i]);
            CHECK(j >= 0 && strcmp(m->a[j].val, got) == 0,
                  "key value %d of the row is %s, the row's %s is %s", i, got, key_name(type, i),
                  j >= 0 ? m->a[j].val : "absent");
        }
    }
    ok = true;
out:
    return ok;
}

static void key_learn(mt *c, int type, uint64_t kid, const unsigned char *key, size_t len)
{
    if (c->nkeys == c->capkeys) {
        c->capkeys = c->capkeys ? c->capkeys * 2 : 64;
        c->keys = realloc(c->keys, c->capkeys * sizeof *c->keys);
        assert_non_null(c->keys);
    }
    key_seen *k = &c->keys[c->nkeys++];
    k->type = type;
    k->kid = kid;
    k->key = ads_arena_alloc(c->ra, len ? len : 1);
    assert_non_null(k->key);
    memcpy(k->key, key, len);
    k->len = len;
}

/* The record of a row: by its key bytes if its lookup showed them, else
 * from its key values. */
static bool row_record(mt *c, ads_row *row, int type, uint64_t *kid)
{
    for (size_t i = 0; i < c->nkeys; i++) {
        const key_seen *k = &c->keys[i];
        if (k->type == type && k->len == row->key_len && memcmp(k->key, row->key, k->len) == 0) {
            *kid = k->kid;
            return true;
        }
    }
    return row_kid(c, row, type, NULL, kid);
}

/*
 * Compare an engine row with a model row. In full: every attribute, the
 * timeline attributes as the decoded record and the row's view give them,
 * and the row's bytes and __SystemTimestamp are remembered. Otherwise (the
 * same row met again by another read of the same comparison): the timeline
 * fields, and the bytes and __SystemTimestamp must be those seen in full.
 */
static bool check_row(mt *c, ads_row *row, const mrow *m, bool latest, bool full, bool *decoded)
{
    bool ok = false;
    const char *where = "row";
    if (decoded)
        *decoded = false;
    ads_error err;
    c->rows_checked++;
    CHECK(row->ts == m->ts && row->ts_offset == m->off, "%s: _Timestamp %.6f%+d, model %.6f%+d",
          where, row->ts, (int)row->ts_offset, m->ts, (int)m->off);
    CHECK(row->deleted == m->del, "%s: _Deleted %d, model %d", where, row->deleted, m->del);
    CHECK(row->latest == latest, "%s: __Latest %d, model %d", where, row->latest, latest);
    seen_row *sr = seen_of(c, m->seq);
    uint64_t h = bytes_hash(row->data, row->len);
    if (!full) {
        CHECK(sr->gen == c->gen, "%s: a row the history of its record did not show", where);
        CHECK(sr->systs == row->systime_us && sr->hash == h,
              "%s: __SystemTimestamp %lld and bytes differ from the same row read in its history "
              "(%lld)",
              where, (long long)row->systime_us, (long long)sr->systs);
        ok = true;
        goto out;
    }
    CHECK(sr->gen != c->gen || (sr->systs == row->systime_us && sr->hash == h),
          "%s: the row differs from the same row read before", where);
    sr->gen = c->gen;
    sr->systs = row->systime_us;
    sr->hash = h;
    if (sr->decoded && sr->dec_hash == h && sr->dec_latest == latest) {
        ok = true; /* these bytes were compared in full before */
        goto out;
    }
    const ads_record *r;
    int rc = ads_row_record(&r, row, ADS_ROW_TIMELINE, c->ra, &err);
    CHECK(rc == 0, "%s: decoding: %d %s", where, rc, err.message);
    int seen[4] = {0}, plain = 0;
    for (size_t i = 0; i < ads_record_size(r); i++) {
        ads_str n = ads_record_name(r, i);
        const ads_expr *e = ads_record_expr(r, i);
        int tl = timeline_attr(n);
        if (tl >= 0) {
            const ads_value *v = ads_expr_literal_value(e);
            seen[tl]++;
            CHECK(v, "%s: %.*s is not a value", where, (int)n.len, n.p);
            bool good;
            switch (tl) {
            case 0:
                good =
                    v->type == ADS_ABSTIME && v->u.abs.secs == m->ts && v->u.abs.offset == m->off;
                break;
            case 1:
                good = v->type == ADS_ABSTIME && v->u.abs.secs == (double)row->systime_us / 1e6;
                break;
            case 2:
                good = v->type == ADS_BOOLEAN && v->u.b == latest;
                break;
            default:
                good = v->type == ADS_BOOLEAN && v->u.b == m->del;
            }
            CHECK(good, "%s: %.*s = %s", where, (int)n.len, n.p, unparse_value(c->ra, v));
            continue;
        }
        plain++;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n.len < 60 ? n.len : 60), n.p);
        int j = attr_find(m, name);
        CHECK(j >= 0, "%s: the row has %s = %s, the model has no %s", where, name,
              unparse_expr(c->ra, e), name);
        CHECK(strcmp(m->a[j].name, name) == 0, "%s: attribute spelled %s, model %s", where, name,
              m->a[j].name);
        const char *got = unparse_expr(c->ra, e);
        CHECK(strcmp(got, m->a[j].val) == 0, "%s: %s = %s, model %s", where, name, got,
              m->a[j].val);
    }
    CHECK(plain == m->n, "%s: %d attributes, model %d", where, plain, m->n);
    for (int i = 0; i < 4; i++)
        CHECK(seen[i] == 1, "%s: timeline attribute %d appears %d times", where, i, seen[i]);
    /* the timeline attributes through the row's view, names in another case */
    ads_view view = ads_row_view(row, NULL);
    ads_value v;
    assert_int_equal(ads_expr_eval(&v, c->tl_query, &view, c->ra), 0);
    CHECK(v.type == ADS_LIST && v.u.list.n == 4 && v.u.list.items[0].type == ADS_ABSTIME &&
              v.u.list.items[0].u.abs.secs == m->ts && v.u.list.items[1].type == ADS_BOOLEAN &&
              v.u.list.items[1].u.b == latest && v.u.list.items[2].type == ADS_BOOLEAN &&
              v.u.list.items[2].u.b == m->del && v.u.list.items[3].type == ADS_ABSTIME,
          "%s: through the view %s", where, unparse_value(c->ra, &v));
    sr->decoded = true;
    sr->dec_hash = h;
    sr->dec_latest = latest;
    if (decoded)
        *decoded = true;
    ok = true;
out:
    return ok;
}

static size_t expected_rows(const mrec *r, bool hist, bool del, const mrow **out)
{
    size_t n = 0;
    if (!hist) {
        const mrow *l = latest_of(r);
        if (l && (del || !l->del))
            out[n++] = l;
        return n;
    }
    for (size_t i = 0; i < r->n; i++)
        if (del || !r->rows[i].del)
            out[n++] = &r->rows[i];
    return n;
}

/* A scan of type t against the model. */
static bool check_scan(mt *c, ads_txn *txn, const ads_type *t, int type, unsigned flags)
{
    bool ok = false, hist = flags & ADS_SCAN_HISTORY, del = flags & ADS_SCAN_DELETED;
    ads_scan *s = NULL;
    ads_row *row;
    ads_error err;
    const mrow **exp = NULL;
    int rc = ads_scan_open(&s, txn, t, NULL, flags, &err);
    CHECK(rc == 0, "scan %s flags %u: %d %s", type_names[type], flags, rc, err.message);
    if (c->nvisited < c->m.n) {
        c->nvisited = c->m.n;
        c->visited = realloc(c->visited, c->nvisited * sizeof *c->visited);
        assert_non_null(c->visited);
    }
    if (c->m.n)
        memset(c->visited, 0, c->m.n * sizeof *c->visited);
    size_t maxrows = 1;
    for (size_t i = 0; i < c->m.n; i++)
        if (c->m.recs[i].n > maxrows)
            maxrows = c->m.recs[i].n;
    exp = malloc(maxrows * sizeof *exp);
    assert_non_null(exp);
    mrec *cur = NULL;
    size_t nexp = 0, at = 0, groups = 0;
    bool have_order = false;
    uint64_t last_ordered = 0;
    while ((rc = ads_scan_next(&row, s, &err)) == 1) {
        uint64_t kid;
        CHECK(row->type == t, "scan %s flags %u: a row of another type", type_names[type], flags);
        if (!row_record(c, row, type, &kid))
            goto out;
        if (!cur || cur->kid != kid) {
            CHECK(!cur || at == nexp, "scan %s flags %u: record %llu gave %zu rows, model %zu",
                  type_names[type], flags, (unsigned long long)cur->kid, at, nexp);
            cur = model_find(&c->m, type, kid);
            CHECK(cur, "scan %s flags %u: record %llu is not in the model", type_names[type], flags,
                  (unsigned long long)kid);
            size_t idx = (size_t)(cur - c->m.recs);
            CHECK(!c->visited[idx], "scan %s flags %u: record %llu comes twice", type_names[type],
                  flags, (unsigned long long)kid);
            c->visited[idx] = true;
            nexp = expected_rows(cur, hist, del, exp);
            at = 0;
            groups++;
            CHECK(nexp > 0, "scan %s flags %u: record %llu should not appear", type_names[type],
                  flags, (unsigned long long)kid);
            if (kid_ordered(type, kid)) {
                CHECK(!have_order || kid > last_ordered,
                      "scan %s flags %u: record %llu after %llu (key order)", type_names[type],
                      flags, (unsigned long long)kid, (unsigned long long)last_ordered);
                have_order = true;
                last_ordered = kid;
            }
        }
        CHECK(at < nexp, "scan %s flags %u: record %llu gave more than %zu rows", type_names[type],
              flags, (unsigned long long)kid, nexp);
        if (!check_row(c, row, exp[at], exp[at] == latest_of(cur), false, NULL)) {
            context(c, "scan %s flags %u record %llu row %zu", type_names[type], flags,
                    (unsigned long long)kid, at);
            goto out;
        }
        at++;
    }
    CHECK(rc == 0, "scan %s flags %u: %d %s", type_names[type], flags, rc, err.message);
    CHECK(!cur || at == nexp, "scan %s flags %u: record %llu gave %zu rows, model %zu",
          type_names[type], flags, (unsigned long long)cur->kid, at, nexp);
    size_t want = 0;
    for (size_t i = 0; i < c->m.n; i++)
        if (c->m.recs[i].type == type && expected_rows(&c->m.recs[i], hist, del, exp) > 0)
            want++;
    CHECK(groups == want, "scan %s flags %u: %zu records, model %zu", type_names[type], flags,
          groups, want);
    ok = true;
out:
    ads_scan_close(s);
    free(exp);
    return ok;
}

/* The key values of record kid, spelled at random, in arena a. */
static ads_value *key_values(mt *c, int type, uint64_t kid, ads_arena *a, ads_buf *text)
{
    int n = type_nkeys(type);
    ads_value *k = ads_arena_alloc(a, (size_t)n * sizeof *k);
    assert_non_null(k);
    ads_buf_adds(text, "{ ");
    for (int i = 0; i < n; i++) {
        const char *s = key_text(c, type, kid, i, a);
        k[i] = eval_text(c, s, a);
        ads_buf_printf(text, "%s%s", i ? ", " : "", s);
    }
    ads_buf_adds(text, " }");
    return k;
}

/* Lookups and histories of every record of the type, and lookups of absent keys. */
static bool check_records(mt *c, ads_txn *txn, const ads_type *t, int type)
{
    bool ok = false;
    ads_error err;
    ads_scan *s = NULL;
    ads_row row, *hr;
    ads_buf kt = ADS_BUF_INIT;
    int rc;
    for (size_t i = 0; i < c->m.n; i++) {
        const mrec *r = &c->m.recs[i];
        if (r->type != type)
            continue;
        ads_buf_clear(&kt);
        ads_value *k = key_values(c, type, r->kid, c->ra, &kt);
        rc = ads_txn_get(txn, &row, t, k, (size_t)type_nkeys(type), c->ra, &err);
        CHECK(rc == 1, "get %s %.200s: %d %s (model: %zu rows)", type_names[type],
              ads_buf_cstr(&kt), rc, rc < 0 ? err.message : "", r->n);
        uint64_t kid;
        if (!row_kid(c, &row, type, latest_of(r), &kid))
            goto out;
        CHECK(kid == r->kid, "get %s %.200s: found record %llu", type_names[type],
              ads_buf_cstr(&kt), (unsigned long long)kid);
        key_learn(c, type, kid, row.key, row.key_len);
        for (int pass = 0; pass < 2; pass++) {
            unsigned flags = pass ? 0 : ADS_SCAN_DELETED;
            rc = ads_history_open(&s, txn, &row, NULL, flags, &err);
            CHECK(rc == 0, "history %s %.200s: %d %s", type_names[type], ads_buf_cstr(&kt), rc,
                  err.message);
            size_t at = 0;
            while ((rc = ads_scan_next(&hr, s, &err)) == 1) {
                while (at < r->n && pass && r->rows[at].del)
                    at++;
                CHECK(at < r->n, "history %s %.200s flags %u: more rows than the model's %zu",
                      type_names[type], ads_buf_cstr(&kt), flags, r->n);
                bool decoded;
                if (!check_row(c, hr, &r->rows[at], at == r->n - 1, pass == 0, &decoded) ||
                    (decoded && !row_kid(c, hr, type, &r->rows[at], &kid))) {
                    context(c, "history %s %.200s flags %u row %zu", type_names[type],
                            ads_buf_cstr(&kt), flags, at);
                    goto out;
                }
                CHECK(!decoded || kid == r->kid, "history %s %.200s row %zu: a row of record %llu",
                      type_names[type], ads_buf_cstr(&kt), at, (unsigned long long)kid);
                at++;
            }
            CHECK(rc == 0, "history %s %.200s: %d %s", type_names[type], ads_buf_cstr(&kt), rc,
                  err.message);
            while (at < r->n && pass && r->rows[at].del)
                at++;
            CHECK(at == r->n, "history %s %.200s flags %u: stopped at row %zu of the model's %zu",
                  type_names[type], ads_buf_cstr(&kt), flags, at, r->n);
            ads_scan_close(s);
            s = NULL;
        }
        /* the row the lookup gave is the one the history ended with */
        if (!check_row(c, &row, latest_of(r), true, false, NULL)) {
            context(c, "get %s %.200s", type_names[type], ads_buf_cstr(&kt));
            goto out;
        }
    }
    /* keys with no record */
    uint32_t space = key_space(c, type) + (type == TY_LOG);
    for (uint64_t kid = type == TY_LOG; kid < space + (type == TY_LOG); kid++) {
        if (model_find(&c->m, type, kid))
            continue;
        ads_buf_clear(&kt);
        ads_value *k = key_values(c, type, kid, c->ra, &kt);
        rc = ads_txn_get(txn, &row, t, k, (size_t)type_nkeys(type), c->ra, &err);
        CHECK(rc == 0, "get %s %.200s: %d %s, but the model has no such record", type_names[type],
              ads_buf_cstr(&kt), rc, rc < 0 ? err.message : "");
    }
    ok = true;
out:
    ads_scan_close(s);
    ads_buf_free(&kt);
    return ok;
}

/* The whole store against the model, in txn (read or write). */
static bool compare_all(mt *c, ads_txn *txn)
{
    bool ok = false;
    ads_error err;
    c->gen++;
    c->nkeys = 0;
    for (int type = 0; type < NTYPES; type++) {
        const ads_type *t;
        const char *name = spell_in(c, type_names[type], c->ra);
        int rc = ads_txn_type(&t, txn, name, strlen(name), &err);
        CHECK(rc == 0, "type %s: %d %s", name, rc, err.message);
        ads_type_counts tc;
        rc = ads_txn_type_counts(&tc, txn, t, &err);
        CHECK(rc == 0, "counts %s: %d %s", name, rc, err.message);
        uint64_t records = 0, deleted = 0, history = 0;
        for (size_t i = 0; i < c->m.n; i++) {
            const mrec *r = &c->m.recs[i];
            if (r->type != type)
                continue;
            records++;
            deleted += latest_of(r)->del;
            history += r->n - 1;
        }
        CHECK(tc.records == records && tc.deleted == deleted && tc.history == history,
              "counts %s: records %llu deleted %llu history %llu, model %llu %llu %llu", name,
              (unsigned long long)tc.records, (unsigned long long)tc.deleted,
              (unsigned long long)tc.history, (unsigned long long)records,
              (unsigned long long)deleted, (unsigned long long)history);
        static const unsigned flags[4] = {0, ADS_SCAN_DELETED, ADS_SCAN_HISTORY,
                                          ADS_SCAN_HISTORY | ADS_SCAN_DELETED};
        /* histories first: they check every row in full */
        if (!check_records(c, txn, t, type))
            goto out;
        for (int f = 0; f < 4; f++)
            if (!check_scan(c, txn, t, type, flags[f]))
                goto out;
    }
    /* every row was seen; __SystemTimestamp follows the order of the writes */
    uint64_t prev_seq = 0;
    int64_t prev = INT64_MIN;
    size_t rows = 0, seen = 0;
    for (size_t i = 0; i < c->m.n; i++)
        rows += c->m.recs[i].n;
    for (uint64_t q = 1; q < c->capseen && q <= c->seq; q++) {
        const seen_row *sr = &c->seen[q];
        if (sr->gen != c->gen)
            continue;
        seen++;
        CHECK(sr->systs > prev,
              "__SystemTimestamp %lld of write %llu is not after %lld of write %llu",
              (long long)sr->systs, (unsigned long long)q, (long long)prev,
              (unsigned long long)prev_seq);
        prev = sr->systs;
        prev_seq = q;
    }
    CHECK(seen == rows, "%zu rows read in full, the model has %zu", seen, rows);
    ok = true;
out:
    return ok;
}

/* ---- operations through the API and the model ---- */

typedef struct given {
    mattr a[MAX_ATTRS];
    int n;
    int nvals; /* the first nvals (AdType and the keys) go in as values */
} given;

/* A record from given attributes (values as text; NULL: undefined), AdType
 * and keys first spelled by the caller, plus _Timestamp and _Deleted. The
 * attributes are added in random order. */
static const ads_record *build(mt *c, const given *g, bool has_ts, double ts, int32_t off, int del,
                               ads_buf *text)
{
    ads_record_builder *b;
    ads_error err;
    int order[MAX_ATTRS + 2], n = g->n + has_ts + (del >= 0);
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)below(c, (uint32_t)i + 1), tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    assert_int_equal(ads_record_builder_new(&b, c->ra, NULL), 0);
    for (int k = 0; k < n; k++) {
        int i = order[k];
        if (i < g->n) {
            const char *v = g->a[i].val ? g->a[i].val : "undefined";
            const ads_expr *e;
            if (ads_expr_parse(&e, c->ra, v, strlen(v), &err))
                fail_msg("parse %s: %s", v, err.message);
            const ads_value *lit = ads_expr_literal_value(e);
            ads_value kv;
            if (!lit && i < g->nvals) {
                /* key attributes go in as values (-2.5 parses as an expression) */
                assert_int_equal(ads_expr_eval(&kv, e, NULL, c->ra), 0);
                lit = &kv;
            }
            if (lit && i < g->nvals)
                assert_int_equal(
                    ads_record_builder_add_value(b, g->a[i].name, strlen(g->a[i].name), lit, NULL),
                    0);
            else
                assert_int_equal(
                    ads_record_builder_add(b, g->a[i].name, strlen(g->a[i].name), e, NULL), 0);
        } else if (i == g->n && has_ts) {
            ads_value v = ads_abstime(ts, off);
            const char *nm = spell_in(c, "_Timestamp", c->ra);
            assert_int_equal(ads_record_builder_add_value(b, nm, strlen(nm), &v, NULL), 0);
        } else {
            ads_value v = ads_bool(del == 1);
            const char *nm = spell_in(c, "_Deleted", c->ra);
            assert_int_equal(ads_record_builder_add_value(b, nm, strlen(nm), &v, NULL), 0);
        }
    }
    const ads_record *r = ads_record_builder_finish(b);
    ads_record_unparse(text, r);
    return r;
}

static void given_add(given *g, const char *name, const char *val)
{
    assert_true(g->n < MAX_ATTRS);
    g->a[g->n].name = name;
    g->a[g->n].val = val;
    g->n++;
}

/* AdType and the key attributes of record kid (kid 0 of Log: none). */
static void given_keys(mt *c, given *g, int type, uint64_t kid, bool with_key)
{
    char buf[64];
    snprintf(buf, sizeof buf, "\"%s\"", spell(c, type_names[type]));
    given_add(g, spell(c, "AdType"), intern(c, buf));
    g->nvals = g->n;
    if (!with_key)
        return;
    for (int i = 0; i < type_nkeys(type); i++) {
        const char *t = key_text(c, type, kid, i, c->ra);
        ads_value v = eval_text(c, t, c->ra);
        given_add(g, spell(c, key_name(type, i)), unparse_value(c->sa, &v));
    }
    g->nvals = g->n;
}

static bool plain_given(const given *g, const char *name)
{
    for (int i = 0; i < g->n; i++)
        if (strcasecmp(g->a[i].name, name) == 0)
            return true;
    return false;
}

/* A past date for a row of r: a tie with one of its rows, between its rows,
 * or before all of them. */
static double past_ts(mt *c, const mrec *r)
{
    const mrow *l = latest_of(r);
    if (!l)
        return now_secs(c) - (double)(1 + below(c, 100000)) / 1000.0;
    int k = (int)below(c, 3);
    if (k == 0)
        return r->rows[below(c, (uint32_t)r->n)].ts;
    double lo = r->rows[0].ts - 60.0;
    if (k == 1)
        return lo + (double)below(c, (uint32_t)((l->ts - lo) * 1000) + 1) / 1000.0;
    return r->rows[0].ts - (double)(1 + below(c, 100000)) / 1000.0;
}

static double future_ts(mt *c, const mrec *r)
{
    const mrow *l = latest_of(r);
    double base = l && l->ts > now_secs(c) ? l->ts : now_secs(c);
    if (chance(c, 20) && l)
        return l->ts; /* a tie with the latest row: the newer write is latest */
    return base + (double)(1 + below(c, 100000)) / 1000.0;
}

static const char *info_text(mt *c, const ads_write_info *i)
{
    char buf[160];
    snprintf(buf, sizeof buf, "latest %d created %d changed %d ts %.3f", i->latest, i->created,
             i->changed, i->ts);
    return intern_in(c->ra, buf);
}

static bool check_info(mt *c, const char *what, const ads_write_info *info, const expect *x,
                       bool check_created)
{
    bool ok = false;
    CHECK(info->changed == x->changed, "%s: info.changed %d, model %d", what, info->changed,
          x->changed);
    if (x->same)
        CHECK(info->latest == x->latest && info->ts == x->ts && !info->created,
              "%s: unchanged: info.latest %d ts %.6f created %d, model %d %.6f", what,
              info->latest, info->ts, info->created, x->latest, x->ts);
    if (x->changed) {
        CHECK(info->latest == x->latest, "%s: info.latest %d, model %d", what, info->latest,
              x->latest);
        CHECK(info->ts == x->ts, "%s: info.ts %.6f, model %.6f", what, info->ts, x->ts);
        CHECK(!check_created || info->created == x->created, "%s: info.created %d, model %d", what,
              info->created, x->created);
    }
    ok = true;
out:
    return ok;
}

typedef struct pclock {
    int64_t ns;
} pclock;

static int64_t pclock_now(void *ctx)
{
    return ((pclock *)ctx)->ns;
}

static void pclock_sleep(void *ctx, int64_t ns)
{
    ((pclock *)ctx)->ns += ns;
}

/* The OUID the store's generator makes next, from the transaction's
 * generator state and the clock; with skip, the first of those that no
 * record of Evt holds (the key a generated Evt record gets). */
static bool next_evt(mt *c, ads_txn *txn, bool skip, ads_id *out)
{
    bool ok = false;
    ads_error err;
    ads_idgen_state st;
    pclock pc = {c->ns};
    ads_clock clk = {pclock_now, pclock_sleep, &pc};
    int rc = ads_txn_idgen_state(&st, txn, &err);
    CHECK(rc == 0, "idgen state: %d %s", rc, err.message);
    for (int tries = 0; tries < 100; tries++) {
        rc = ads_ouid_next(out, &st, &clk, &err);
        CHECK(rc >= 0, "ads_ouid_next: %d %s", rc, err.message);
        if (!skip)
            break;
        bool taken = false;
        for (size_t i = 0; i < c->nevt && !taken; i++)
            taken = c->evt[i].hi == out->hi && c->evt[i].lo == out->lo &&
                    model_find(&c->m, TY_EVT, i);
        if (!taken)
            break;
    }
    ok = true;
out:
    return ok;
}

/* STORE: merge, undefined removes, a date in the past or future, _Deleted. */
static bool op_store(mt *c, ads_txn *txn)
{
    bool ok = false;
    ads_error err;
    ads_write_info info;
    ads_buf text = ADS_BUF_INIT;
    int type = (int)below(c, NTYPES);
    uint64_t kid;
    bool fresh_log = false, fresh_evt = false;
    if (type == TY_LOG) {
        fresh_log = c->log_last == 0 || chance(c, 45);
        kid = fresh_log ? c->log_last + 1 : 1 + below(c, (uint32_t)c->log_last);
        if (!fresh_log && chance(c, 25)) {
            /* an Id given past the counter: it moves the counter (for good:
             * an abort keeps what generators handed out) */
            kid = c->log_last + 1 + below(c, 3);
            c->log_last = kid;
        }
    } else if (type == TY_EVT) {
        int k = (int)below(c, 100);
        ads_id next;
        if (k < 55 && !next_evt(c, txn, k < 40, &next))
            goto out;
        if (k < 40) {
            fresh_evt = true; /* generated: the model knows which id it gets */
            kid = evt_kid(c, next);
        } else if (k < 55) {
            kid = evt_kid(c, next); /* given: the id the generator would make next */
        } else {
            kid = below(c, key_space(c, type));
        }
    } else {
        kid = below(c, key_space(c, type));
    }
    mrec *r = model_find(&c->m, type, kid);
    given g = {0};
    given_keys(c, &g, type, kid, !fresh_log && !fresh_evt);
    for (size_t i = 0; i < NPLAIN; i++) {
        if (!chance(c, 45))
            continue;
        const char *v = chance(c, 20) ? NULL : c->values[below(c, NVALUES)];
        given_add(&g, spell(c, plain_names[i]), v);
    }
    int tsm = (int)below(c, 100), del = -1;
    bool has_ts = tsm >= 60;
    double ts = 0;
    int32_t off = 0;
    if (has_ts) {
        ts = tsm < 85 ? past_ts(c, r) : future_ts(c, r);
        off = zone_offsets[below(c, 4)];
    }
    int dm = (int)below(c, 100);
    if (dm < 10)
        del = 1;
    else if (dm < 15)
        del = 0;
    const ads_record *rec = build(c, &g, has_ts, ts, off, del, &text);
    logf_(c, "  store %s", ads_buf_cstr(&text));
    memset(&info, 0xa5, sizeof info);
    int rc = ads_txn_store(txn, rec, &info, &err);
    logf_(c, " -> %d %s\n", rc, rc ? err.message : info_text(c, &info));
    CHECK(rc == 0, "store: %d %s", rc, err.message);
    /* the model */
    if (fresh_log) {
        kid = ++c->log_last;
        char id[32];
        snprintf(id, sizeof id, "#%llu", (unsigned long long)kid);
        given_add(&g, "Id", intern(c, id));
        logf_(c, "    (model: the new record is Log %s)\n", id);
    }
    if (fresh_evt) {
        char id[ADS_ID_TEXT_MAX + 1];
        ads_id_format(id, c->evt[kid]);
        given_add(&g, "Id", intern(c, id));
        logf_(c, "    (model: the new record is Evt %s)\n", id);
    }
    if (!r)
        r = model_add(&c->m, type, kid);
    expect x = model_write(c, r, g.a, g.n, true, has_ts, ts, off, del == 1);
    if (!check_info(c, "store", &info, &x, del != 1))
        goto out;
    ok = true;
out:
    ads_buf_free(&text);
    return ok;
}

/* STORE of a row a record already has, exactly (attribute spellings too):
 * its latest row, now or later, or an earlier row, dated within the time it
 * was in effect (a backfill). Nothing is appended (but for Log, which keeps
 * unchanged rows), and every read stays as it was. */
static bool op_store_again(mt *c, ads_txn *txn)
{
    bool ok = false;
    ads_error err;
    ads_write_info info;
    ads_buf text = ADS_BUF_INIT;
    int type = (int)below(c, NTYPES);
    size_t cand = 0;
    for (size_t i = 0; i < c->m.n; i++)
        cand += c->m.recs[i].type == type;
    if (!cand) {
        logf_(c, "  store-again %s: no record\n", type_names[type]);
        return true;
    }
    size_t pick = below(c, (uint32_t)cand);
    mrec *r = NULL;
    for (size_t i = 0; i < c->m.n && !r; i++)
        if (c->m.recs[i].type == type && pick-- == 0)
            r = &c->m.recs[i];
    size_t k = chance(c, 60) ? r->n - 1 : below(c, (uint32_t)r->n);
    const mrow *src = &r->rows[k];
    /* AdType and the keys first, as values */
    given g = {0};
    given_add(&g, src->a[attr_find(src, "AdType")].name, src->a[attr_find(src, "AdType")].val);
    for (int i = 0; i < type_nkeys(type); i++) {
        int ki = attr_find(src, key_name(type, i));
        assert_true(ki >= 0);
        given_add(&g, src->a[ki].name, src->a[ki].val);
    }
    g.nvals = g.n;
    for (int i = 0; i < src->n; i++)
        if (!plain_given(&g, src->a[i].name))
            given_add(&g, src->a[i].name, src->a[i].val);
    bool has_ts = k + 1 < r->n || chance(c, 40);
    double ts = 0;
    int32_t off = zone_offsets[below(c, 4)];
    if (k + 1 < r->n) {
        double next = r->rows[k + 1].ts;
        ts = src->ts + (next - src->ts) * (double)below(c, 1000) / 1000.0;
        if (!(ts < next))
            ts = src->ts;
    } else if (has_ts) {
        ts = future_ts(c, r);
    }
    int del = src->del ? 1 : chance(c, 50) ? 0 : -1;
    const ads_record *rec = build(c, &g, has_ts, ts, off, del, &text);
    logf_(c, "  store-again (row %zu of %zu) %s", k, r->n, ads_buf_cstr(&text));
    memset(&info, 0xa5, sizeof info);
    int rc = ads_txn_store(txn, rec, &info, &err);
    logf_(c, " -> %d %s\n", rc, rc ? err.message : info_text(c, &info));
    CHECK(rc == 0, "store-again: %d %s", rc, err.message);
    expect x = model_write(c, r, g.a, g.n, true, has_ts, ts, off, del == 1);
    if (!check_info(c, "store-again", &info, &x, del != 1))
        goto out;
    c->unchanged += x.same;
    ok = true;
out:
    ads_buf_free(&text);
    return ok;
}

/* A record of the type that exists (or, now and then, one that does not). */
static uint64_t pick_kid(mt *c, int type, bool prefer_deleted)
{
    if (prefer_deleted || chance(c, 80)) {
        size_t cand = 0, pick;
        for (size_t i = 0; i < c->m.n; i++)
            if (c->m.recs[i].type == type && (!prefer_deleted || latest_of(&c->m.recs[i])->del))
                cand++;
        if (cand) {
            pick = below(c, (uint32_t)cand);
            for (size_t i = 0; i < c->m.n; i++)
                if (c->m.recs[i].type == type &&
                    (!prefer_deleted || latest_of(&c->m.recs[i])->del) && pick-- == 0)
                    return c->m.recs[i].kid;
        }
    }
    uint32_t space = key_space(c, type);
    if (type == TY_LOG)
        return 1 + below(c, space + 1);
    return below(c, space);
}

static int get_record(mt *c, ads_txn *txn, int type, uint64_t kid, ads_row *row, const ads_type **t,
                      ads_buf *kt, ads_error *err)
{
    const char *name = spell_in(c, type_names[type], c->ra);
    int rc = ads_txn_type(t, txn, name, strlen(name), err);
    if (rc)
        return rc;
    ads_value *k = key_values(c, type, kid, c->ra, kt);
    return ads_txn_get(txn, row, *t, k, (size_t)type_nkeys(type), c->ra, err);
}

/* DELETE through ads_txn_delete. */
static bool op_delete(mt *c, ads_txn *txn)
{
    bool ok = false;
    ads_error err;
    ads_row row;
    const ads_type *t;
    ads_write_info info;
    ads_buf kt = ADS_BUF_INIT;
    int type = (int)below(c, NTYPES);
    uint64_t kid = pick_kid(c, type, false);
    mrec *r = model_find(&c->m, type, kid);
    int rc = get_record(c, txn, type, kid, &row, &t, &kt, &err);
    logf_(c, "  delete %s %s", type_names[type], ads_buf_cstr(&kt));
    CHECK(rc == (r != NULL), "delete: get gave %d %s, model has %d", rc, rc < 0 ? err.message : "",
          r != NULL);
    if (!r) {
        logf_(c, " -> absent\n");
        ok = true;
        goto out;
    }
    memset(&info, 0xa5, sizeof info);
    rc = ads_txn_delete(txn, &row, &info, &err);
    logf_(c, " -> %d %s\n", rc, rc ? err.message : info_text(c, &info));
    CHECK(rc == 0, "delete: %d %s", rc, err.message);
    expect x = {0};
    const mrow *l = latest_of(r);
    if (!l->del) {
        mrow copy = *l;
        x = model_write(c, r, copy.a, copy.n, false, false, 0, 0, true);
    }
    if (!check_info(c, "delete", &info, &x, false))
        goto out;
    ok = true;
out:
    ads_buf_free(&kt);
    return ok;
}

/* UPDATE through ads_txn_put_row: undelete (_Deleted = false) or replace. */
static bool op_put_row(mt *c, ads_txn *txn)
{
    bool ok = false;
    ads_error err;
    ads_row row;
    const ads_type *t;
    ads_write_info info;
    ads_buf kt = ADS_BUF_INIT, text = ADS_BUF_INIT;
    int type = (int)below(c, NTYPES);
    bool undelete = chance(c, 60);
    uint64_t kid = pick_kid(c, type, undelete);
    mrec *r = model_find(&c->m, type, kid);
    int rc = get_record(c, txn, type, kid, &row, &t, &kt, &err);
    CHECK(rc == (r != NULL), "put_row: get %s %s gave %d %s, model has %d", type_names[type],
          ads_buf_cstr(&kt), rc, rc < 0 ? err.message : "", r != NULL);
    if (!r) {
        logf_(c, "  put_row %s %s -> absent\n", type_names[type], ads_buf_cstr(&kt));
        ok = true;
        goto out;
    }
    /* the latest row's attributes, some changed, some dropped, some added */
    const mrow *l = latest_of(r);
    given g = {0};
    given_keys(c, &g, type, kid, true);
    for (int i = 0; i < l->n; i++) {
        if (plain_given(&g, l->a[i].name))
            continue;
        int k = (int)below(c, 100);
        if (k < 70)
            given_add(&g, l->a[i].name, l->a[i].val);
        else if (k < 85)
            given_add(&g, spell(c, l->a[i].name), c->values[below(c, NVALUES)]);
    }
    for (size_t i = 0; i < NPLAIN; i++)
        if (!plain_given(&g, plain_names[i]) && chance(c, 15))
            given_add(&g, spell(c, plain_names[i]), c->values[below(c, NVALUES)]);
    int del = chance(c, 70) ? 0 : -1;
    if (chance(c, 5))
        del = 1;
    bool has_ts = chance(c, 15);
    double ts = has_ts ? future_ts(c, r) : 0;
    int32_t off = has_ts ? zone_offsets[below(c, 4)] : 0;
    const ads_record *rec = build(c, &g, has_ts, ts, off, del, &text);
    logf_(c, "  put_row %s %s %s", type_names[type], ads_buf_cstr(&kt), ads_buf_cstr(&text));
    memset(&info, 0xa5, sizeof info);
    rc = ads_txn_put_row(txn, &row, rec, &info, &err);
    logf_(c, " -> %d %s\n", rc, rc ? err.message : info_text(c, &info));
    CHECK(rc == 0, "put_row: %d %s", rc, err.message);
    expect x = model_write(c, r, g.a, g.n, false, has_ts, ts, off, del == 1);
    if (!check_info(c, "put_row", &info, &x, del != 1))
        goto out;
    ok = true;
out:
    ads_buf_free(&kt);
    ads_buf_free(&text);
    return ok;
}

/* PURGE through ads_txn_purge. */
static bool op_purge(mt *c, ads_txn *txn)
{
    bool ok = false;
    ads_error err;
    ads_row row;
    const ads_type *t;
    ads_buf kt = ADS_BUF_INIT;
    int type = (int)below(c, NTYPES);
    uint64_t kid = pick_kid(c, type, chance(c, 30));
    mrec *r = model_find(&c->m, type, kid);
    int rc = get_record(c, txn, type, kid, &row, &t, &kt, &err);
    logf_(c, "  purge %s %s", type_names[type], ads_buf_cstr(&kt));
    CHECK(rc == (r != NULL), "purge: get gave %d %s, model has %d", rc, rc < 0 ? err.message : "",
          r != NULL);
    if (!r) {
        logf_(c, " -> absent\n");
        ok = true;
        goto out;
    }
    rc = ads_txn_purge(txn, &row, &err);
    logf_(c, " -> %d %s\n", rc, rc ? err.message : "");
    CHECK(rc == 0, "purge: %d %s", rc, err.message);
    model_remove(&c->m, r);
    ok = true;
out:
    ads_buf_free(&kt);
    return ok;
}

/* Walk a type's latest rows in the write transaction and delete, purge or
 * rewrite some as they come; every record must come exactly once. */
static bool op_scan_rewrite(mt *c, ads_txn *txn)
{
    bool ok = false;
    ads_error err;
    ads_scan *s = NULL;
    ads_row *row;
    const ads_type *t;
    ads_buf text = ADS_BUF_INIT;
    uint64_t *kids = NULL;
    int type = (int)below(c, NTYPES);
    unsigned flags = chance(c, 50) ? ADS_SCAN_DELETED : 0;
    const char *name = spell_in(c, type_names[type], c->ra);
    int rc = ads_txn_type(&t, txn, name, strlen(name), &err);
    CHECK(rc == 0, "type %s: %d %s", name, rc, err.message);
    /* the records the walk must meet */
    size_t want = 0, met = 0;
    kids = calloc(c->m.n + 1, sizeof *kids);
    assert_non_null(kids);
    for (size_t i = 0; i < c->m.n; i++)
        if (c->m.recs[i].type == type && (flags || !latest_of(&c->m.recs[i])->del))
            kids[want++] = c->m.recs[i].kid;
    logf_(c, "  scan-rewrite %s flags %u (%zu records)\n", type_names[type], flags, want);
    rc = ads_scan_open(&s, txn, t, NULL, flags, &err);
    CHECK(rc == 0, "scan-rewrite: open: %d %s", rc, err.message);
    while ((rc = ads_scan_next(&row, s, &err)) == 1) {
        uint64_t kid;
        if (!row_kid(c, row, type, NULL, &kid))
            goto out;
        size_t j;
        for (j = 0; j < want && kids[j] != kid; j++)
            ;
        CHECK(j < want, "scan-rewrite %s: record %llu unexpected or met twice", type_names[type],
              (unsigned long long)kid);
        kids[j] = UINT64_MAX;
        met++;
        mrec *r = model_find(&c->m, type, kid);
        CHECK(r, "scan-rewrite: record %llu not in the model", (unsigned long long)kid);
        int k = (int)below(c, 100);
        ads_write_info info;
        memset(&info, 0xa5, sizeof info);
        if (k < 25) {
            rc = ads_txn_delete(txn, row, &info, &err);
            logf_(c, "    delete %llu -> %d %s\n", (unsigned long long)kid, rc,
                  rc ? err.message : info_text(c, &info));
            CHECK(rc == 0, "scan-rewrite: delete: %d %s", rc, err.message);
            expect x = {0};
            const mrow *l = latest_of(r);
            if (!l->del) {
                mrow copy = *l;
                x = model_write(c, r, copy.a, copy.n, false, false, 0, 0, true);
            }
            if (!check_info(c, "scan-rewrite delete", &info, &x, false))
                goto out;
        } else if (k < 40) {
            rc = ads_txn_purge(txn, row, &err);
            logf_(c, "    purge %llu -> %d %s\n", (unsigned long long)kid, rc,
                  rc ? err.message : "");
            CHECK(rc == 0, "scan-rewrite: purge: %d %s", rc, err.message);
            model_remove(&c->m, r);
        } else if (k < 65) {
            /* UPDATE ... SET Rank = <value>, _Deleted = false */
            const mrow *l = latest_of(r);
            given g = {0};
            for (int i = 0; i < l->n; i++)
                given_add(&g, l->a[i].name, l->a[i].val);
            /* AdType and keys as the row has them: first entries of g are not
             * necessarily keys here, so build() must not treat them as such */
            int rk = attr_find(l, "Rank");
            const char *rv = c->values[below(c, NVALUES)];
            if (rk >= 0) {
                g.a[rk].val = rv;
            } else {
                given_add(&g, "Rank", rv);
            }
            /* move AdType and the key attributes to the front for build() */
            given h = {0};
            given_add(&h, g.a[attr_find(l, "AdType")].name, g.a[attr_find(l, "AdType")].val);
            for (int i = 0; i < type_nkeys(type); i++) {
                int ki = attr_find(l, key_name(type, i));
                given_add(&h, g.a[ki].name, g.a[ki].val);
            }
            h.nvals = h.n;
            for (int i = 0; i < g.n; i++)
                if (!plain_given(&h, g.a[i].name))
                    given_add(&h, g.a[i].name, g.a[i].val);
            ads_buf_clear(&text);
            const ads_record *rec = build(c, &h, false, 0, 0, 0, &text);
            rc = ads_txn_put_row(txn, row, rec, &info, &err);
            logf_(c, "    put_row %llu %s -> %d %s\n", (unsigned long long)kid, ads_buf_cstr(&text),
                  rc, rc ? err.message : info_text(c, &info));
            CHECK(rc == 0, "scan-rewrite: put_row: %d %s", rc, err.message);
            expect x = model_write(c, r, h.a, h.n, false, false, 0, 0, false);
            if (!check_info(c, "scan-rewrite put_row", &info, &x, true))
                goto out;
        }
    }
    CHECK(rc == 0, "scan-rewrite: next: %d %s", rc, err.message);
    CHECK(met == want, "scan-rewrite %s flags %u: met %zu of %zu records", type_names[type], flags,
          met, want);
    ok = true;
out:
    ads_scan_close(s);
    free(kids);
    ads_buf_free(&text);
    return ok;
}

/* ---- history trims (retention) ---- */

/* One row of a timeline, as compared before and after a trim. */
typedef struct tl_ent {
    uint64_t keyh; /* hash of the record's stored key */
    size_t rec;
    double ts;
    int64_t systs;
    bool del;
    uint64_t h; /* of the row's bytes */
} tl_ent;

typedef struct tl_list {
    tl_ent *e;
    size_t n, cap;
} tl_list;

/* The rows of type t's timeline over [t1, t2), less the records that are
 * in effect nowhere in it (only deleted rows: a trim may remove them). */
static bool timeline_of(mt *c, ads_txn *txn, const ads_type *t, double t1, double t2,
                        tl_list *out)
{
    bool ok = false;
    ads_error err;
    ads_timeline *tl = NULL;
    ads_row *row;
    size_t rec;
    bool *live = NULL;
    out->n = 0;
    int rc = ads_timeline_open(&tl, txn, t, t1, t2, &err);
    CHECK(rc == 0, "timeline open: %d %s", rc, err.message);
    while ((rc = ads_timeline_next(&row, &rec, tl, &err)) == 1) {
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 64;
            out->e = realloc(out->e, out->cap * sizeof *out->e);
            assert_non_null(out->e);
        }
        tl_ent *e = &out->e[out->n++];
        e->keyh = bytes_hash(row->key, row->key_len);
        e->rec = rec;
        e->ts = row->ts;
        e->systs = row->systime_us;
        e->del = row->deleted;
        e->h = bytes_hash(row->data, row->len);
    }
    CHECK(rc == 0, "timeline next: %d %s", rc, err.message);
    size_t nrec = ads_timeline_records(tl);
    live = calloc(nrec + 1, sizeof *live);
    assert_non_null(live);
    for (size_t i = 0; i < out->n; i++)
        if (!out->e[i].del && out->e[i].rec < nrec)
            live[out->e[i].rec] = true;
    size_t k = 0;
    for (size_t i = 0; i < out->n; i++)
        if (out->e[i].rec < nrec && live[out->e[i].rec])
            out->e[k++] = out->e[i];
    out->n = k;
    ok = true;
out:
    free(live);
    ads_timeline_close(tl);
    return ok;
}

/* The model's trim at cut (engine.h, ads_txn_trim_history). */
static void model_trim(mt *c, double cut)
{
    for (size_t i = 0; i < c->m.n;) {
        mrec *r = &c->m.recs[i];
        const mrow *l = latest_of(r);
        if (l->del && l->ts < cut) {
            model_remove(&c->m, r);
            continue;
        }
        size_t before = 0;
        while (before + 1 < r->n && r->rows[before].ts <= cut)
            before++;
        size_t go = l->ts <= cut ? before : before ? before - 1 : 0;
        memmove(r->rows, r->rows + go, (r->n - go) * sizeof *r->rows);
        r->n -= go;
        i++;
    }
}

/* Trim every record's history at a cut in one transaction; timelines over
 * windows from the cut on must give the same rows before and after, and the
 * model trims too (the comparisons that follow check every row). */
static bool op_trim(mt *c)
{
    bool ok = false;
    ads_error err;
    ads_txn *txn = NULL;
    ads_scan *s = NULL;
    ads_row *row;
    tl_list before[NTYPES][3], after = {NULL, 0, 0};
    double w1[3], w2[3];
    memset(before, 0, sizeof before);
    double lo = now_secs(c), hi = now_secs(c);
    size_t nrows = 0;
    for (size_t i = 0; i < c->m.n; i++)
        for (size_t j = 0; j < c->m.recs[i].n; j++) {
            double ts = c->m.recs[i].rows[j].ts;
            lo = ts < lo ? ts : lo;
            hi = ts > hi ? ts : hi;
            nrows++;
        }
    double cut = lo - 10 + (hi - lo + 20) * (double)below(c, 1000) / 1000.0;
    if (nrows && chance(c, 30)) {
        /* a tie with a row's date */
        size_t pick = below(c, (uint32_t)nrows);
        for (size_t i = 0; i < c->m.n; i++)
            for (size_t j = 0; j < c->m.recs[i].n; j++)
                if (pick-- == 0)
                    cut = c->m.recs[i].rows[j].ts;
    }
    for (int w = 0; w < 3; w++) {
        w1[w] = w == 0 ? cut : cut + (hi + 10 - cut) * (double)below(c, 1000) / 1000.0;
        w2[w] = w == 2 ? hi + 1000 : w1[w] + (double)(1 + below(c, 300000)) / 1000.0;
    }
    logf_(c, "  trim at %.6f (windows from %.6f, %.6f, %.6f)\n", cut, w1[0], w1[1], w1[2]);
    int rc = ads_txn_begin(&txn, c->db, ADS_TXN_READONLY, &err);
    CHECK(rc == 0, "trim: begin: %d %s", rc, err.message);
    for (int type = 0; type < NTYPES; type++) {
        const ads_type *t;
        rc = ads_txn_type(&t, txn, type_names[type], strlen(type_names[type]), &err);
        CHECK(rc == 0, "type: %d %s", rc, err.message);
        for (int w = 0; w < 3; w++)
            if (!timeline_of(c, txn, t, w1[w], w2[w], &before[type][w]))
                goto out;
    }
    ads_txn_abort(txn);
    txn = NULL;
    rc = ads_txn_begin(&txn, c->db, 0, &err);
    CHECK(rc == 0, "trim: begin: %d %s", rc, err.message);
    uint64_t removed = 0, records = 0;
    for (int type = 0; type < NTYPES; type++) {
        const ads_type *t;
        ads_trim_result res = {0, 0};
        rc = ads_txn_type(&t, txn, type_names[type], strlen(type_names[type]), &err);
        CHECK(rc == 0, "type: %d %s", rc, err.message);
        rc = ads_scan_open(&s, txn, t, NULL, ADS_SCAN_DELETED, &err);
        CHECK(rc == 0, "trim: scan: %d %s", rc, err.message);
        while ((rc = ads_scan_next(&row, s, &err)) == 1)
            if ((rc = ads_txn_trim_history(txn, row, cut, &res, &err)))
                break;
        CHECK(rc == 0, "trim: %d %s", rc, err.message);
        ads_scan_close(s);
        s = NULL;
        removed += res.rows;
        records += res.records;
    }
    rc = ads_txn_commit(txn, &err);
    txn = NULL;
    CHECK(rc == 0, "trim: commit: %d %s", rc, err.message);
    size_t rows_before = nrows, recs_before = c->m.n;
    model_trim(c, cut);
    size_t rows_after = 0;
    for (size_t i = 0; i < c->m.n; i++)
        rows_after += c->m.recs[i].n;
    logf_(c, "    -> %llu rows, %llu records removed\n", (unsigned long long)removed,
          (unsigned long long)records);
    CHECK(removed == rows_before - rows_after && records == recs_before - c->m.n,
          "trim removed %llu rows and %llu records, the model %zu and %zu",
          (unsigned long long)removed, (unsigned long long)records, rows_before - rows_after,
          recs_before - c->m.n);
    rc = ads_txn_begin(&txn, c->db, ADS_TXN_READONLY, &err);
    CHECK(rc == 0, "trim: begin: %d %s", rc, err.message);
    for (int type = 0; type < NTYPES; type++) {
        const ads_type *t;
        rc = ads_txn_type(&t, txn, type_names[type], strlen(type_names[type]), &err);
        CHECK(rc == 0, "type: %d %s", rc, err.message);
        for (int w = 0; w < 3; w++) {
            if (!timeline_of(c, txn, t, w1[w], w2[w], &after))
                goto out;
            const tl_list *b = &before[type][w];
            CHECK(after.n == b->n, "trim: timeline of %s over [%.6f, %.6f): %zu rows, %zu before",
                  type_names[type], w1[w], w2[w], after.n, b->n);
            for (size_t i = 0; i < b->n; i++)
                CHECK(after.e[i].keyh == b->e[i].keyh && after.e[i].ts == b->e[i].ts &&
                          after.e[i].systs == b->e[i].systs && after.e[i].del == b->e[i].del &&
                          after.e[i].h == b->e[i].h,
                      "trim: timeline of %s over [%.6f, %.6f): row %zu differs", type_names[type],
                      w1[w], w2[w], i);
        }
    }
    c->trims++;
    ok = true;
out:
    ads_scan_close(s);
    ads_txn_abort(txn);
    for (int type = 0; type < NTYPES; type++)
        for (int w = 0; w < 3; w++)
            free(before[type][w].e);
    free(after.e);
    return ok;
}

/* Move the clock between transactions: on, not at all, or back. (Within a
 * transaction it stands still: the engine may read "now" once per
 * transaction, and the rules do not say when.) */
static void move_clock(mt *c)
{
    int k = (int)below(c, 100);
    int64_t ms;
    if (k < 10)
        ms = -(int64_t)(1 + below(c, 120000));
    else if (k < 30)
        ms = 0;
    else
        ms = 1 + below(c, 20000);
    c->ns += ms * 1000000;
    logf_(c, "  clock %+lld ms\n", (long long)ms);
}

/* ---- one seed ---- */

static void report(void *ctx, const char *problem)
{
    mt *c = ctx;
    logf_(c, "  verify: %s\n", problem);
}

static bool verify(mt *c)
{
    bool ok = false;
    ads_verify_result res;
    ads_error err;
    int rc = ads_db_verify(&res, c->db, report, c, &err);
    CHECK(rc == 0, "verify: %d %s", rc, err.message);
    CHECK(res.problems == 0, "verify found %llu problems (see the log)",
          (unsigned long long)res.problems);
    ok = true;
out:
    return ok;
}

static bool step(mt *c)
{
    bool ok = false;
    ads_txn *txn = NULL;
    ads_error err;
    model saved;
    model_copy(&saved, &c->m);
    logf_(c, "step %d:\n", c->step);
    move_clock(c);
    int rc = ads_txn_begin(&txn, c->db, 0, &err);
    CHECK(rc == 0, "begin: %d %s", rc, err.message);
    int nops = 1 + (int)below(c, 4);
    for (int i = 0; i < nops; i++) {
        int k = (int)below(c, 100);
        bool good;
        c->ops++;
        if (k < 45)
            good = op_store(c, txn);
        else if (k < 55)
            good = op_store_again(c, txn);
        else if (k < 68)
            good = op_delete(c, txn);
        else if (k < 84)
            good = op_put_row(c, txn);
        else if (k < 92)
            good = op_purge(c, txn);
        else
            good = op_scan_rewrite(c, txn);
        ads_arena_reset(c->ra);
        if (!good)
            goto out;
    }
    if (chance(c, 12)) {
        logf_(c, "  (compare inside the write transaction)\n");
        if (!compare_all(c, txn))
            goto out;
        ads_arena_reset(c->ra);
    }
    if (chance(c, 15)) {
        logf_(c, "  abort\n");
        ads_txn_abort(txn);
        txn = NULL;
        model_free(&c->m);
        c->m = saved;
        memset(&saved, 0, sizeof saved);
    } else {
        logf_(c, "  commit\n");
        rc = ads_txn_commit(txn, &err);
        txn = NULL;
        CHECK(rc == 0, "commit: %d %s", rc, err.message);
    }
    rc = ads_txn_begin(&txn, c->db, ADS_TXN_READONLY, &err);
    CHECK(rc == 0, "begin read: %d %s", rc, err.message);
    if (!compare_all(c, txn))
        goto out;
    ads_txn_abort(txn);
    txn = NULL;
    if (chance(c, 8)) {
        if (!op_trim(c))
            goto out;
        rc = ads_txn_begin(&txn, c->db, ADS_TXN_READONLY, &err);
        CHECK(rc == 0, "begin read: %d %s", rc, err.message);
        if (!compare_all(c, txn))
            goto out;
        ads_txn_abort(txn);
        txn = NULL;
    }
    if ((c->step + 1) % VERIFY_EVERY == 0 && !verify(c))
        goto out;
    if ((c->step + 1) % REOPEN_EVERY == 0) {
        logf_(c, "  close and open the store again\n");
        ads_db_close(c->db);
        c->db = NULL;
        rc = ads_db_open(&c->db, c->path, ADS_DB_NOSYNC, &err);
        CHECK(rc == 0, "reopen: %d %s", rc, err.message);
        set_clock(c);
        rc = ads_txn_begin(&txn, c->db, ADS_TXN_READONLY, &err);
        CHECK(rc == 0, "begin read after reopen: %d %s", rc, err.message);
        if (!compare_all(c, txn))
            goto out;
    }
    ok = true;
out:
    ads_txn_abort(txn);
    ads_arena_reset(c->ra);
    model_free(&saved);
    return ok;
}

static bool run_seed(mt *c, uint64_t seed, int steps)
{
    c->seed = seed;
    c->rng = seed * UINT64_C(0x2545f4914f6cdd1d) + 1;
    c->ns = T0_MS * 1000000;
    c->seq = 0;
    c->log_last = 0;
    c->nevt = 0;
    evt_kid(c, (ads_id){UINT64_C(0x6500000000000011), UINT64_C(0x10001)});
    if (c->capseen)
        memset(c->seen, 0, c->capseen * sizeof *c->seen);
    ads_buf_clear(&c->log);
    c->dir = make_temp_dir();
    assert_non_null(c->dir);
    snprintf(c->path, sizeof c->path, "%s/db", c->dir);
    ads_error err;
    /* History rows are kept as differences from a keyframe every
     * ADS_HISTORY_KEYFRAME_ROWS rows; a third of the seeds take one every 2
     * or 3 rows, so that short histories meet the keyframe rules (and the
     * reopens below keep the setting: the store reads it at each open) */
    static const char *const keyframes[] = {"2", "3", NULL};
    if (keyframes[seed % 3])
        setenv("ADSTORE_TEST_KEYFRAME_ROWS", keyframes[seed % 3], 1);
    else
        unsetenv("ADSTORE_TEST_KEYFRAME_ROWS");
    /* History goes in chunks (engine/hput.c) of up to 32 rows; seeds take
     * 1, 2 or 3 as the most, so that chunk boundaries are everywhere, and a
     * fourth of them begin as a format-6 store (one row per entry) whose
     * records are turned into chunks as they are written once the store is
     * opened again half way through the run */
    static const char *const chunk_rows[] = {"1", "2", "3", NULL};
    unsetenv("ADSTORE_TEST_HISTORY_ROWS");
    if (seed % 4 == 0)
        setenv("ADSTORE_TEST_HISTORY_ROWS", "1", 1);
    if (chunk_rows[seed / 4 % 4])
        setenv("ADSTORE_TEST_CHUNK_ROWS", chunk_rows[seed / 4 % 4], 1);
    else
        unsetenv("ADSTORE_TEST_CHUNK_ROWS");
    /* NOSYNC: thousands of commits; durability is not what this test is about */
    if (ads_db_open(&c->db, c->path, ADS_DB_CREATE | ADS_DB_NOSYNC, &err))
        fail_msg("open: %s", err.message);
    set_clock(c);
    ts_declare(c->db, "Host", "Name", NULL);
    ts_declare(c->db, "Pair", "A,B", NULL);
    ts_declare(c->db, "Log", "", "KeepUnchangedRows = true;");
    ts_declare(c->db, "Evt", "", "AutoGenerateKey = true;");
    bool ok = true;
    for (c->step = 0; c->step < steps && ok; c->step++) {
        if (c->step == steps / 2)
            unsetenv("ADSTORE_TEST_HISTORY_ROWS"); /* at the next reopen */
        ok = step(c);
    }
    if (ok)
        ok = verify(c);
    else
        c->step--;
    if (!ok) {
        printf("test_model: MISMATCH at seed %llu, step %d: %s\n", (unsigned long long)seed,
               c->step, c->why);
        printf("replay: ADS_MODEL_SEED=%llu ADS_MODEL_STEPS=%d %s\n", (unsigned long long)seed,
               steps, "test_model");
        printf("operation log (seed %llu):\n%s", (unsigned long long)seed, ads_buf_cstr(&c->log));
        fflush(stdout);
    }
    ads_db_close(c->db);
    c->db = NULL;
    remove_tree(c->dir);
    free(c->dir);
    c->dir = NULL;
    model_free(&c->m);
    ads_arena_reset(c->sa);
    return ok;
}

static void mt_init(mt *c)
{
    memset(c, 0, sizeof *c);
    c->sa = ads_arena_new();
    c->ra = ads_arena_new();
    assert_non_null(c->sa);
    assert_non_null(c->ra);
    for (int i = 0; i < NHOST_SHORT; i++)
        c->hosts[i] = strdup(host_short[i]);
    for (int i = NHOST_SHORT; i < NHOST; i++) {
        /* 500 bytes that agree past the engine's stored prefix, then a digit */
        c->hosts[i] = malloc(503);
        assert_non_null(c->hosts[i]);
        for (int j = 0; j < 500; j++)
            c->hosts[i][j] = "long"[j % 4];
        c->hosts[i][500] = (char)('1' + i - NHOST_SHORT);
        c->hosts[i][501] = 0;
    }
}

static void mt_free(mt *c)
{
    for (int i = 0; i < NHOST; i++)
        free(c->hosts[i]);
    ads_arena_free(c->sa);
    ads_arena_free(c->ra);
    ads_buf_free(&c->log);
    free(c->seen);
    free(c->keys);
    free(c->visited);
    free(c->evt);
}

/* Canonical texts of the value pool (kept in the seed arena's place: the
 * pool is made again after each seed's arena reset). */
static void make_values(mt *c)
{
    for (size_t i = 0; i < NVALUES; i++) {
        const ads_expr *e;
        ads_error err;
        if (ads_expr_parse(&e, c->ra, value_texts[i], strlen(value_texts[i]), &err))
            fail_msg("parse %s: %s", value_texts[i], err.message);
        c->values[i] = unparse_expr(c->sa, e);
    }
    const char *q = "{ _TIMESTAMP, __latest, _deleted, __systemTimestamp }";
    assert_int_equal(ads_expr_parse(&c->tl_query, c->sa, q, strlen(q), NULL), 0);
    ads_arena_reset(c->ra);
}

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : dflt;
}

static void model__random_operations_agree_with_the_model(void **state)
{
    (void)state;
    mt *c = calloc(1, sizeof *c);
    assert_non_null(c);
    mt_init(c);
    int steps = env_int("ADS_MODEL_STEPS", DEFAULT_STEPS);
    int one = env_int("ADS_MODEL_SEED", 0);
    int seeds = env_int("ADS_MODEL_SEEDS", DEFAULT_SEEDS);
    int first = one ? one : 1, last = one ? one : seeds;
    bool ok = true;
    for (int seed = first; seed <= last && ok; seed++) {
        make_values(c);
        ok = run_seed(c, (uint64_t)seed, steps);
    }
    printf("test_model: seeds %d..%d, %d steps each, %llu operations (%llu unchanged stores, "
           "%llu history trims), %llu rows compared%s\n",
           first, last, steps, (unsigned long long)c->ops, (unsigned long long)c->unchanged,
           (unsigned long long)c->trims,
           (unsigned long long)c->rows_checked,
           ok ? "" : " (stopped at the first mismatch)");
    char why_copy[sizeof c->why];
    memcpy(why_copy, c->why, sizeof why_copy);
    mt_free(c);
    free(c);
    if (!ok)
        fail_msg("the store and the model disagree: %s", why_copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model__random_operations_agree_with_the_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
