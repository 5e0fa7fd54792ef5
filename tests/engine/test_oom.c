/*
 * tests/engine/test_oom.c: out-of-memory injection (shared/spec/reliability.md,
 * "Out of memory"). The library promises never to abort on a failed
 * allocation: every failure is reported as an error, leaks nothing, and a
 * failed write leaves the store as it was.
 *
 * How: this program is linked with -Wl,--wrap=malloc,calloc,realloc,free,
 * strdup,strndup, so every call to those in the objects linked statically
 * into it (the adstore library, and this file) goes through the __wrap_*
 * functions below. Armed at N, the wrapper fails the Nth allocation once
 * (NULL, errno ENOMEM) and lets the rest through. Each operation below runs
 * for N = 1, 2, 3, ... until a run makes fewer than N allocations; every run
 * that writes starts from a fresh copy of a small prepared store (reads open
 * the prepared store itself read-only) and checks:
 *   - a failed run returned a negative code with a message; a run that
 *     succeeded despite the failure produced exactly the reference output;
 *   - after the store is closed, nothing the run allocated is still held
 *     (the wrapper keeps the set of live blocks it handed out); under the
 *     sanitizer build LeakSanitizer checks the whole process at exit too;
 *   - the store verifies and its text dump is byte for byte the dump before
 *     (failed writes) or after the reference run (successful ones).
 *
 * Limits: --wrap rewrites only references inside the statically linked
 * objects. Allocations made inside the shared libraries (LMDB's page and
 * cursor buffers, msgpack-c's unpacker zone used by the dump reader, PCRE2's
 * compile and match data, and libc's own: getline, fopen, opendir,
 * open_memstream) are not failed here; their failure paths are the
 * libraries' own NULL returns, which the library checks where it calls them.
 * posix_memalign, aligned_alloc and asprintf are not used by the library
 * (grep keeps that true: see docs/building.md).
 *
 * Run it alone: ctest -R test_oom, or build-dir/tests/test_oom [PATTERN] for
 * the loops whose names match (e.g. 'oom__select*'); ADS_OOM_VERBOSE=1 prints
 * every injection point's outcome. A mismatch leaves both results in
 * test_oom.got and test_oom.want in the current directory.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "classad/formats.h"
#include "engine/engine.h"
#include "query/query.h"
#include "tests/cli/run.h"
#include "tests/engine/helpers.h"

#define T0 1704067200.0 /* 2024-01-01T00:00:00Z */
#define T_OP (T0 + 7200.0)

/* ------------------------------------------------------------------------ */
/* The allocator wrapper                                                    */
/* ------------------------------------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* Blocks handed out while armed, by address: open addressing with linear
 * probing and backward-shift deletion, so the table never fills with
 * tombstones. A block freed that is not in the table (allocated before the
 * run, or by a shared library) is simply passed on. */
#define LIVE_BITS 18
#define LIVE_CAP ((size_t)1 << LIVE_BITS)

static struct {
    bool armed;           /* count and track allocations */
    unsigned long calls;  /* allocations seen since armed */
    unsigned long fail_at; /* fail this one (1-based); 0: none */
    bool injected;        /* the failure happened */
    size_t live;          /* tracked blocks not yet freed */
    bool overflow;        /* the table filled: the leak check is off for this run */
    void *slot[LIVE_CAP];
} oom;

static size_t slot_of(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> (64 - LIVE_BITS));
}

static void live_add(void *p)
{
    if (!p)
        return;
    if (oom.live >= LIVE_CAP / 2) {
        oom.overflow = true;
        return;
    }
    size_t i = slot_of(p);
    while (oom.slot[i])
        i = (i + 1) & (LIVE_CAP - 1);
    oom.slot[i] = p;
    oom.live++;
}

static void live_remove(void *p)
{
    if (!p || !oom.live)
        return;
    size_t i = slot_of(p);
    while (oom.slot[i] && oom.slot[i] != p)
        i = (i + 1) & (LIVE_CAP - 1);
    if (!oom.slot[i])
        return;
    oom.slot[i] = NULL;
    oom.live--;
    /* shift back the entries of the run after the hole that belong before it */
    size_t j = i;
    for (;;) {
        j = (j + 1) & (LIVE_CAP - 1);
        if (!oom.slot[j])
            break;
        size_t k = slot_of(oom.slot[j]);
        bool between = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (between)
            continue;
        oom.slot[i] = oom.slot[j];
        oom.slot[j] = NULL;
        i = j;
    }
}

/* True if this allocation is the one to fail. */
static bool fail_now(void)
{
    if (!oom.armed)
        return false;
    oom.calls++;
    if (oom.fail_at && oom.calls == oom.fail_at) {
        oom.injected = true;
        errno = ENOMEM;
        return true;
    }
    return false;
}

void *__wrap_malloc(size_t n)
{
    if (fail_now())
        return NULL;
    void *p = __real_malloc(n);
    if (oom.armed)
        live_add(p);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (fail_now())
        return NULL;
    void *p = __real_calloc(n, size);
    if (oom.armed)
        live_add(p);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now())
        return NULL; /* p stays valid, as realloc promises */
    void *q = __real_realloc(p, n);
    if (q || n == 0) {
        live_remove(p);
        if (oom.armed)
            live_add(q);
    }
    return q;
}

void __wrap_free(void *p)
{
    live_remove(p);
    __real_free(p);
}

char *__wrap_strdup(const char *s)
{
    if (fail_now())
        return NULL;
    char *p = __real_strdup(s);
    if (oom.armed)
        live_add(p);
    return p;
}

char *__wrap_strndup(const char *s, size_t n)
{
    if (fail_now())
        return NULL;
    char *p = __real_strndup(s, n);
    if (oom.armed)
        live_add(p);
    return p;
}

static void oom_arm(unsigned long fail_at)
{
    memset(oom.slot, 0, sizeof oom.slot);
    oom.live = 0;
    oom.overflow = false;
    oom.calls = 0;
    oom.injected = false;
    oom.fail_at = fail_at;
    oom.armed = true;
}

static void oom_disarm(void)
{
    oom.armed = false;
}

/* ------------------------------------------------------------------------ */
/* Stores: the prepared one, fresh copies, fingerprints                     */
/* ------------------------------------------------------------------------ */

static char *template_dir; /* the parent directory made by make_temp_dir */
static char template_db[1100];
static char *dump_msgpack; /* part of the template's dump in both formats (dump_of) */
static size_t dump_msgpack_len;
static char *dump_text;
static size_t dump_text_len;

static int64_t fake_ns;
static int64_t fake_now(void *ctx)
{
    (void)ctx;
    return fake_ns;
}
static void fake_sleep(void *ctx, int64_t ns)
{
    (void)ctx;
    fake_ns += ns;
}

static void set_clock(ads_db *db, double secs)
{
    ads_clock c = {fake_now, fake_sleep, NULL};
    fake_ns = (int64_t)(secs * 1e9);
    ads_db_set_clock(db, &c);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    FILE *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    assert_int_equal(ferror(in), 0);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Copy the store in directory from into a new directory to (not lock.mdb:
 * the copy gets its own). */
static void copy_store(const char *from, const char *to)
{
    assert_int_equal(mkdir(to, 0700), 0);
    DIR *d = opendir(from);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        char a[1400], b[1400];
        struct stat st;
        if (!strcmp(e->d_name, "lock.mdb"))
            continue;
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        if (stat(a, &st) == 0 && S_ISREG(st.st_mode))
            copy_file(a, b);
    }
    closedir(d);
}

/* What a store holds, as its text dump, after checking that it verifies;
 * "(no store)" when dir holds none. malloc'd. */
static char *fingerprint(const char *dir)
{
    ads_db *db;
    ads_error err;
    int rc = ads_db_open(&db, dir, 0, &err);
    if (rc == ADS_ENOTFOUND)
        return strdup("(no store)");
    if (rc)
        fail_msg("open %s after the run: %s", dir, err.message);
    ads_verify_result vr;
    if (ads_db_verify(&vr, db, NULL, NULL, &err))
        fail_msg("verify: %s", err.message);
    if (vr.problems)
        fail_msg("the store has %llu problems after the run", (unsigned long long)vr.problems);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    ads_dump_options o = {.format = ADS_DUMP_TEXT};
    if (ads_db_dump(db, f, &o, NULL, &err))
        fail_msg("dump: %s", err.message);
    assert_int_equal(fclose(f), 0);
    ads_db_close(db);
    /* Identifiers and sequence values handed out stay handed out when the
     * write that drew them fails (engine/db.c, abandon), so that none is
     * ever given twice: generator state may move on. Leave it, and the
     * trailer's checksum over it, out of the comparison. */
    char *w = text;
    for (char *line = text; *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
        bool gen = !strncmp(line, "[ Meta = \"idgen\"", 16) ||
                   !strncmp(line, "[ Meta = \"luid\"", 15) ||
                   !strncmp(line, "[ Meta = \"seq/", 14);
        if (!gen) {
            memmove(w, line, n);
            w += n;
        }
        line += n;
    }
    *w = '\0';
    char *sum = strstr(text, "; Checksum = \"");
    if (sum)
        memset(sum + 14, '-', 16);
    return text;
}

static void store_or_fail(ads_db *db, double secs, const char *text)
{
    ads_error err;
    set_clock(db, secs);
    if (ts_store(db, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

/* A dump of the Slot and Job records (and the declarations, which come
 * along): restore and the dump reader walk every row of it, so fewer rows
 * than the whole store keep those loops short. */
static char *dump_of(ads_db *db, int format, size_t *len)
{
    static const char *const types[] = {"Slot", "Job"};
    char *text = NULL;
    ads_error err;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    ads_dump_options o = {.format = format, .types = types, .ntypes = 2};
    if (ads_db_dump(db, f, &o, NULL, &err))
        fail_msg("dump: %s", err.message);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* The prepared store: two keyed types with a little history (for the
 * timeline), a type with a generated key, a sequence. */
static int make_template(void **state)
{
    (void)state;
    ads_db *db;
    ads_error err;
    template_dir = make_temp_dir();
    assert_non_null(template_dir);
    snprintf(template_db, sizeof template_db, "%s/db", template_dir);
    if (ads_db_open(&db, template_db, ADS_DB_CREATE, &err))
        fail_msg("open: %s", err.message);
    set_clock(db, T0 - 60);
    ts_declare(db, "Machine", "Name", NULL);
    ts_declare(db, "Slot", "Machine,Id", NULL);
    ts_declare(db, "Job", "", "AutoGenerateKey = true;");
    store_or_fail(db, T0 - 60,
                  "[ AdType = \"Sequence\"; Name = \"tickets\"; Method = \"increment\" ]");
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 6; i++) {
            char text[400];
            snprintf(text, sizeof text,
                     "[ AdType = \"Machine\"; Name = \"m%d\"; Memory = %d; Platform = \"%s\"; "
                     "Load = %g; Busy = Load > 0.5; Tags = { \"a\", %d }; "
                     "Info = [ Rack = %d; Os = strcat(Platform, \"-x\") ] ]",
                     i, 1024 * (i + 1) + 100 * round, i % 2 ? "linux" : "windows",
                     0.25 * (round + i % 3), i, i / 2);
            store_or_fail(db, T0 + 1200 * round + 60 * i, text);
        }
    }
    for (int i = 0; i < 4; i++) {
        char text[200];
        snprintf(text, sizeof text,
                 "[ AdType = \"Slot\"; Machine = \"m%d\"; Id = %d; State = \"%s\" ]", i % 2, i,
                 i % 3 ? "Claimed" : "Unclaimed");
        store_or_fail(db, T0 + 30 * i, text);
    }
    store_or_fail(db, T0 + 10, "[ AdType = \"Job\"; Owner = \"alice\"; Cpus = 2 ]");
    store_or_fail(db, T0 + 4000,
                  "[ AdType = \"Machine\"; Name = \"m5\"; _Deleted = true ]");
    dump_msgpack = dump_of(db, ADS_DUMP_MSGPACK, &dump_msgpack_len);
    dump_text = dump_of(db, ADS_DUMP_TEXT, &dump_text_len);
    ads_db_close(db);
    return 0;
}

static int drop_template(void **state)
{
    (void)state;
    remove_tree(template_dir);
    free(template_dir);
    free(dump_msgpack);
    free(dump_text);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The loop                                                                 */
/* ------------------------------------------------------------------------ */

/* What an operation gets: the store (open, or only its directory), a
 * stream for its result text, and a second directory it may create. */
typedef struct oom_ctx {
    ads_db *db;
    const char *dir;
    const char *other; /* a path that does not exist yet (restore's target) */
    FILE *out;
} oom_ctx;

enum {
    OOM_NO_STORE,  /* the operation needs no store */
    OOM_READ,      /* the prepared store itself, open read-only before the run (it
                      cannot change: no copy, no fingerprint; keeps the loops fast) */
    OOM_OPEN,      /* a copy of the prepared store, open before the run */
    OOM_DIR,       /* a copy of the prepared store, closed: the run opens it */
    OOM_NEW_DIR,   /* no store: the run creates one in ctx.dir */
    OOM_OTHER      /* no store open; the run writes a new store at ctx.other */
};

typedef struct oom_case {
    const char *name;
    int store;
    bool random_store; /* the store after a success holds random ids: verify only */
    int (*run)(oom_ctx *c, ads_error *err);
} oom_case;

typedef struct oom_outcome {
    int rc;
    bool injected;
    char message[ADS_ERROR_MESSAGE_MAX];
    char *out;     /* the result text */
    size_t out_len;
    char *store;   /* fingerprint of ctx.dir (OOM_OTHER: of ctx.other) after the run */
} oom_outcome;

static void outcome_free(oom_outcome *o)
{
    free(o->out);
    free(o->store);
}

/* Does the case leave a store to check? */
static bool has_store(const oom_case *c)
{
    return c->store != OOM_NO_STORE && c->store != OOM_READ;
}

static void run_once(const oom_case *c, unsigned long fail_at, oom_outcome *o)
{
    char *work = make_temp_dir();
    char dir[1100], other[1100];
    oom_ctx ctx = {0};
    ads_error err;
    assert_non_null(work);
    snprintf(dir, sizeof dir, "%s/db", work);
    snprintf(other, sizeof other, "%s/other", work);
    memset(o, 0, sizeof *o);
    ctx.dir = dir;
    ctx.other = other;
    if (c->store == OOM_OPEN || c->store == OOM_DIR)
        copy_store(template_db, dir);
    if (c->store == OOM_OPEN) {
        if (ads_db_open(&ctx.db, dir, 0, &err))
            fail_msg("open the copy: %s", err.message);
    }
    if (c->store == OOM_READ) {
        if (ads_db_open(&ctx.db, template_db, ADS_DB_READONLY, &err))
            fail_msg("open the prepared store: %s", err.message);
    }
    if (ctx.db)
        set_clock(ctx.db, T_OP);
    else
        fake_ns = (int64_t)(T_OP * 1e9);
    ctx.out = open_memstream(&o->out, &o->out_len);
    assert_non_null(ctx.out);
    memset(&err, 0, sizeof err);

    oom_arm(fail_at);
    o->rc = c->run(&ctx, &err);
    o->injected = oom.injected;
    ads_db_close(ctx.db); /* caches that live as long as the handle go with it */
    oom_disarm();

    assert_int_equal(fclose(ctx.out), 0);
    snprintf(o->message, sizeof o->message, "%s", err.message);
    if (!oom.overflow && oom.live)
        fail_msg("%s, allocation %lu failed: %zu blocks still held after the run (rc %d: %s)",
                 c->name, fail_at, oom.live, o->rc, o->message);
    if (has_store(c))
        o->store = fingerprint(c->store == OOM_OTHER ? other : dir);
    remove_tree(work);
    free(work);
}

/* Two results differ: keep both in files for diff and say where they part. */
static void show_mismatch(const char *got, size_t glen, const char *want, size_t wlen)
{
    FILE *f = fopen("test_oom.got", "wb");
    if (f) {
        fwrite(got, 1, glen, f);
        fclose(f);
    }
    f = fopen("test_oom.want", "wb");
    if (f) {
        fwrite(want, 1, wlen, f);
        fclose(f);
    }
    size_t i = 0, line = 1;
    while (i < glen && i < wlen && got[i] == want[i])
        line += got[i++] == '\n';
    print_error("results differ from byte %zu (line %zu; test_oom.got, test_oom.want):\n"
                "got:  %.200s\nwant: %.200s\n",
                i, line, got + i, want + i);
}

static void oom_loop(const oom_case *c)
{
    bool verbose = getenv("ADS_OOM_VERBOSE") != NULL;
    oom_outcome ref, before = {0};
    unsigned long failed = 0, recovered = 0, n;

    /* what the store holds before: the prepared store, or none */
    if (!has_store(c))
        before.store = NULL;
    else if (c->store == OOM_NEW_DIR || c->store == OOM_OTHER)
        before.store = strdup("(no store)");
    else
        before.store = fingerprint(template_db);

    run_once(c, 0, &ref);
    if (ref.rc)
        fail_msg("%s without injection: %d %s", c->name, ref.rc, ref.message);
    for (n = 1;; n++) {
        oom_outcome o;
        run_once(c, n, &o);
        if (!o.injected) {
            /* the run made fewer than n allocations: every point is covered */
            assert_int_equal(o.rc, 0);
            outcome_free(&o);
            break;
        }
        if (verbose)
            printf("  %s #%lu: %d %s\n", c->name, n, o.rc, o.rc ? o.message : "(recovered)");
        if (o.rc > 0)
            fail_msg("%s, allocation %lu failed: returned %d", c->name, n, o.rc);
        if (o.rc < 0) {
            failed++;
            if (!o.message[0])
                fail_msg("%s, allocation %lu failed: code %d without a message", c->name, n,
                         o.rc);
            if (has_store(c) && strcmp(o.store, before.store)) {
                show_mismatch(o.store, strlen(o.store), before.store, strlen(before.store));
                fail_msg("%s, allocation %lu failed (%s), and the store changed", c->name, n,
                         o.message);
            }
        } else {
            /* the failure was absorbed: the result must be the reference's */
            recovered++;
            if (o.out_len != ref.out_len || memcmp(o.out, ref.out, o.out_len)) {
                show_mismatch(o.out, o.out_len, ref.out, ref.out_len);
                fail_msg("%s, allocation %lu failed but the run succeeded with another result",
                         c->name, n);
            }
            if (has_store(c) && !c->random_store && strcmp(o.store, ref.store)) {
                show_mismatch(o.store, strlen(o.store), ref.store, strlen(ref.store));
                fail_msg("%s, allocation %lu failed but the run succeeded, leaving another store",
                         c->name, n);
            }
        }
        outcome_free(&o);
    }
    printf("%s: %lu injection points (%lu reported, %lu absorbed)\n", c->name, n - 1, failed,
           recovered);
    assert_true(n > 1);
    outcome_free(&ref);
    outcome_free(&before);
}

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/* ------------------------------------------------------------------------ */

/* The value of a buffer written by void unparse functions: it remembers a
 * failed append. */
static int put_buf(FILE *out, ads_buf *b, ads_error *err)
{
    int rc = 0;
    if (b->failed)
        rc = ads_error_set(err, ADS_ENOMEM, "unparse: out of memory");
    else
        fprintf(out, "%s\n", ads_buf_cstr(b));
    ads_buf_clear(b);
    return rc;
}

static int op_create(oom_ctx *c, ads_error *err)
{
    ads_db *db = NULL;
    int rc = ads_db_open(&db, c->dir, ADS_DB_CREATE, err);
    ads_db_close(db);
    return rc;
}

/* Parse a record and store it in its own transaction. */
static int store_text(ads_db *db, const char *text, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    ads_txn *txn = NULL;
    const ads_record *r;
    ads_write_info info;
    int rc;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "arena: out of memory");
    rc = ads_record_parse(&r, a, text, strlen(text), err);
    if (rc)
        goto cleanup;
    rc = ads_txn_begin(&txn, db, 0, err);
    if (rc)
        goto cleanup;
    rc = ads_txn_store(txn, r, &info, err);
    if (rc)
        goto cleanup;
    rc = ads_txn_commit(txn, err);
    txn = NULL;
cleanup:
    ads_txn_abort(txn);
    ads_arena_free(a);
    return rc;
}

static int op_open_store(oom_ctx *c, ads_error *err)
{
    int rc = ads_db_open(&c->db, c->dir, 0, err);
    if (rc)
        return rc;
    set_clock(c->db, T_OP);
    return store_text(c->db, "[ AdType = \"Machine\"; Name = \"m9\"; Memory = 512 ]", err);
}

static int op_store_new(oom_ctx *c, ads_error *err)
{
    return store_text(c->db,
                      "[ AdType = \"Machine\"; Name = \"new1\"; Memory = 4096; "
                      "Tags = { \"x\", 1.5, [ a = 1 ] }; Platform = \"linux\"; "
                      "Big = Memory * 2 > 1000 ]",
                      err);
}

static int op_store_update(oom_ctx *c, ads_error *err)
{
    return store_text(c->db,
                      "[ AdType = \"Machine\"; Name = \"m1\"; Memory = 9999; Extra = \"more\" ]",
                      err);
}

static int op_store_update_slot(oom_ctx *c, ads_error *err)
{
    return store_text(c->db, "[ AdType = \"Slot\"; Machine = \"m1\"; Id = 1; State = \"Idle\" ]",
                      err);
}

/* Run statement text through a session, rows to c->out in native form. */
static int exec_stmt(oom_ctx *c, const char *text, ads_error *err)
{
    ads_query *q = NULL;
    ads_writer *w = NULL;
    ads_exec_info info;
    int rc = ads_query_new(&q, c->db, err);
    if (rc)
        goto cleanup;
    rc = ads_writer_new(&w, ADS_FORMAT_NATIVE, c->out, err);
    if (rc)
        goto cleanup;
    ads_sink sink = ads_writer_sink(w);
    rc = ads_query_exec(q, text, strlen(text), &sink, NULL, &info, err);
    if (!rc)
        fprintf(c->out, "rows %llu\n", (unsigned long long)info.rows);
cleanup:
    ads_writer_free(w);
    ads_query_free(q);
    return rc;
}

#define STMT_OP(fn, text)                                                                     \
    static int fn(oom_ctx *c, ads_error *err)                                                 \
    {                                                                                         \
        return exec_stmt(c, text, err);                                                       \
    }

STMT_OP(op_stmt_store, "STORE [ AdType = \"Machine\"; Name = \"m7\"; Memory = 64 ], "
                       "[ AdType = \"Slot\"; Machine = \"m7\"; Id = 1; State = \"Idle\" ]")
STMT_OP(op_stmt_update, "UPDATE Machine SET Memory = Memory + 1, Note = \"up\" "
                        "WHERE Platform == \"linux\"")
STMT_OP(op_stmt_delete, "DELETE FROM Slot WHERE State == \"Claimed\"")
STMT_OP(op_stmt_purge, "PURGE FROM Machine WHERE Name == \"m5\"")
STMT_OP(op_select_where, "SELECT Name, Memory, Info.Rack AS Rack, size(Tags) AS T FROM Machine "
                         "WHERE Memory > 2000 && regexp(\"m[0-9]\", Name)")
STMT_OP(op_select_group, "SELECT Platform, count(*) AS N, sum(Memory) AS M, "
                         "count_distinct(Busy) AS B FROM Machine GROUP BY Platform "
                         "ORDER BY Platform DESC")
STMT_OP(op_select_order, "SELECT * FROM Machine ORDER BY Memory DESC, Name LIMIT 4")
STMT_OP(op_select_join, "SELECT Id, M.Memory AS Mem, O.Name AS Other FROM Slot "
                        "JOIN Machine M ON M.Name == Machine "
                        "OUTER JOIN Machine O ON O.Memory > M.Memory ORDER BY Id DESC")
STMT_OP(op_select_timeline,
        "SELECT avg@(sum(Memory)) AS Avg, max@(count(*)) AS Peak, Platform FROM Machine "
        "WHERE @timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`) "
        "GROUP BY Platform, @intervals(`30m`)")
STMT_OP(op_select_history, "SELECT Name, Memory FROM Machine WHERE "
                           "@timerange(`2024-01-01T00:00:00Z`, `2024-01-01T02:00:00Z`) "
                           "&& Memory > 3000")

/* The scan API: the latest rows of Machine matching a constraint, each
 * decoded into a record and unparsed, then a record's history. */
static int op_scan(oom_ctx *c, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    ads_txn *txn = NULL;
    ads_scan *s = NULL;
    const ads_type *t;
    const ads_expr *where, *prepared;
    ads_buf b = ADS_BUF_INIT;
    ads_row *row;
    const char *w = "Memory > 1500 && Info.Rack >= 1 && member(\"a\", Tags)";
    int rc;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "arena: out of memory");
    rc = ads_expr_parse(&where, a, w, strlen(w), err);
    if (rc)
        goto cleanup;
    rc = ads_expr_prepare(&prepared, a, where, err);
    if (rc)
        goto cleanup;
    rc = ads_txn_begin(&txn, c->db, ADS_TXN_READONLY, err);
    if (rc)
        goto cleanup;
    rc = ads_txn_type(&t, txn, "Machine", 7, err);
    if (rc)
        goto cleanup;
    rc = ads_scan_open(&s, txn, t, prepared, 0, err);
    if (rc)
        goto cleanup;
    while ((rc = ads_scan_next(&row, s, err)) == 1) {
        const ads_record *r;
        rc = ads_row_record(&r, row, ADS_ROW_TIMELINE, a, err);
        if (rc)
            goto cleanup;
        ads_record_unparse(&b, r);
        rc = put_buf(c->out, &b, err);
        if (rc)
            goto cleanup;
    }
    if (rc)
        goto cleanup;
    ads_scan_close(s);
    s = NULL;
    ads_value key;
    rc = ads_string_copy(&key, a, "m1", 2);
    if (rc) {
        rc = ads_error_set(err, rc, "key: out of memory");
        goto cleanup;
    }
    ads_row one;
    rc = ads_txn_get(txn, &one, t, &key, 1, a, err);
    if (rc == 0)
        rc = ads_error_set(err, ADS_ENOTFOUND, "no machine m1");
    if (rc < 0)
        goto cleanup;
    rc = ads_history_open(&s, txn, &one, NULL, 0, err);
    if (rc)
        goto cleanup;
    while ((rc = ads_scan_next(&row, s, err)) == 1) {
        ads_value v;
        ads_view view = ads_row_view(row, NULL);
        const ads_expr *mem;
        rc = ads_expr_parse(&mem, a, "Memory * 2", 10, err);
        if (rc)
            goto cleanup;
        rc = ads_expr_eval(&v, mem, &view, a);
        if (rc) {
            rc = ads_error_set(err, rc, "eval: out of memory");
            goto cleanup;
        }
        ads_value_unparse(&b, &v);
        rc = put_buf(c->out, &b, err);
        if (rc)
            goto cleanup;
    }
cleanup:
    ads_scan_close(s);
    ads_txn_abort(txn);
    ads_buf_free(&b);
    ads_arena_free(a);
    return rc;
}

/* A bulk load (import's path): keyed records, some new, some updates, with
 * backfilled dates, in one batch (a failed batch commits nothing; batches
 * committed before a failure stay, as they should, so one batch keeps the
 * "store unchanged" check exact). */
static int op_bulk(oom_ctx *c, ads_error *err)
{
    ads_bulk *bk = NULL;
    ads_bulk_options o = {.batch = 10, .backfill = true};
    ads_arena *a = ads_arena_new();
    int rc;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "arena: out of memory");
    rc = ads_bulk_begin(&bk, c->db, &o, err);
    if (rc)
        goto cleanup;
    for (int i = 0; i < 7; i++) {
        char text[300];
        const ads_record *r;
        snprintf(text, sizeof text,
                 "[ AdType = \"Machine\"; Name = \"b%d\"; Memory = %d; "
                 "_Timestamp = absTime(\"2023-12-31T%02d:00:00Z\") ]",
                 i % 5, 100 * i, 10 + i);
        rc = ads_record_parse(&r, a, text, strlen(text), err);
        if (rc)
            goto cleanup;
        rc = ads_bulk_add(bk, r, err);
        if (rc)
            goto cleanup;
    }
    rc = ads_bulk_end(bk, err);
    bk = NULL;
cleanup:
    if (bk) {
        ads_bulk_discard(bk);
        ads_bulk_end(bk, NULL);
    }
    ads_arena_free(a);
    return rc;
}

/* A snapshot sync (import --sync's path): one batch of records of two
 * types, the deletions of the ones it lacks in the batch's transaction (as
 * adstore-bench's P10 makes them), so a failure anywhere commits nothing. */
static int sync_deletions(void *ctx, ads_txn *txn, const ads_bulk_batch *b, ads_error *err)
{
    (void)b;
    uint64_t n = 0;
    int rc = ads_sync_delete(ctx, txn, NULL, NAN, &n, err);
    /* m1, m3, m4 and slots 1-3 (m5 is deleted already, Job is not synced) */
    return rc || n == 6 ? rc : ads_error_set(err, ADS_EINVAL, "sync deleted %llu, not 6",
                                             (unsigned long long)n);
}

static int op_sync(oom_ctx *c, ads_error *err)
{
    static const char *const recs[] = {
        "[ AdType = \"Slot\"; Machine = \"m0\"; Id = 0; State = \"Claimed\" ]",
        "[ AdType = \"Machine\"; Name = \"m7\"; Memory = 64 ]",
        "[ AdType = \"Machine\"; Name = \"m0\"; Memory = 128 ]",
        "[ AdType = \"Machine\"; Name = \"m2\"; Memory = 256 ]",
    };
    ads_sync *sync = NULL;
    ads_bulk *bk = NULL;
    ads_arena *a = ads_arena_new();
    int rc = a ? ads_sync_new(&sync, err) : ads_error_set(err, ADS_ENOMEM, "arena: out of memory");
    ads_bulk_options o = {.batch = 10, .on_batch = sync_deletions, .ctx = sync, .sync = sync};
    if (!rc)
        rc = ads_bulk_begin(&bk, c->db, &o, err);
    for (size_t i = 0; i < sizeof recs / sizeof recs[0] && !rc; i++) {
        const ads_record *r;
        if (!(rc = ads_record_parse(&r, a, recs[i], strlen(recs[i]), err)))
            rc = ads_bulk_add(bk, r, err);
    }
    if (!rc) {
        rc = ads_bulk_end(bk, err);
        bk = NULL;
    }
    if (bk) {
        ads_bulk_discard(bk);
        ads_bulk_end(bk, NULL);
    }
    ads_sync_free(sync);
    ads_arena_free(a);
    return rc;
}

static int dump_as(oom_ctx *c, int format, ads_error *err)
{
    ads_dump_options o = {.format = format};
    ads_dump_result res;
    int rc = ads_db_dump(c->db, c->out, &o, &res, err);
    if (!rc)
        fprintf(c->out, "\nrows %llu meta %llu\n", (unsigned long long)res.rows,
                (unsigned long long)res.meta);
    return rc;
}

static int op_dump_msgpack(oom_ctx *c, ads_error *err)
{
    return dump_as(c, ADS_DUMP_MSGPACK, err);
}

static int op_dump_text(oom_ctx *c, ads_error *err)
{
    return dump_as(c, ADS_DUMP_TEXT, err);
}

static int restore_from(oom_ctx *c, const char *bytes, size_t len, ads_error *err)
{
    FILE *f = fmemopen((void *)bytes, len, "rb");
    if (!f)
        return ads_error_set(err, ADS_EIO, "fmemopen");
    ads_dump_result res;
    int rc = ads_restore(c->other, f, NULL, &res, err);
    fclose(f);
    if (!rc)
        fprintf(c->out, "rows %llu\n", (unsigned long long)res.rows);
    return rc;
}

static int op_restore_msgpack(oom_ctx *c, ads_error *err)
{
    return restore_from(c, dump_msgpack, dump_msgpack_len, err);
}

static int op_restore_text(oom_ctx *c, ads_error *err)
{
    return restore_from(c, dump_text, dump_text_len, err);
}

/* A dump read back as records (import of a dump into a store with data). */
static int op_dump_reader(oom_ctx *c, ads_error *err)
{
    FILE *f = fmemopen(dump_msgpack, dump_msgpack_len, "rb");
    ads_dump_reader *r = NULL;
    ads_arena *a = ads_arena_new();
    ads_buf b = ADS_BUF_INIT;
    const ads_record *rec;
    int rc;
    if (!f || !a) {
        rc = ads_error_set(err, ADS_ENOMEM, "setup: out of memory");
        goto cleanup;
    }
    rc = ads_dump_reader_new(&r, f, err);
    if (rc)
        goto cleanup;
    while ((rc = ads_dump_reader_next(&rec, r, a, err)) == 1) {
        ads_record_unparse(&b, rec);
        rc = put_buf(c->out, &b, err);
        if (rc)
            goto cleanup;
        ads_arena_reset(a);
    }
cleanup:
    ads_dump_reader_free(r);
    if (f)
        fclose(f);
    ads_buf_free(&b);
    ads_arena_free(a);
    return rc;
}

/* The ClassAd language alone: parse, prepare, evaluate, unparse. */
static int op_classad(oom_ctx *c, ads_error *err)
{
    static const char *const exprs[] = {
        ("[ a = 1; b = a + 2; c = { a, b, \"s\" }; d = [ x = b * 2.5; y = strcat(\"p\", \"q\") ] ]"
         ".d.x"),
        "strcat(\"abc\", string(12), \"-\", toUpper(\"x\")) =?= \"abc12-X\"",
        "size(split(\"a b c d\")) + size(stringListMember(\"b\", \"a,b\") ? \"yes\" : \"no\")",
        "regexps(\"([a-z]+)-([0-9]+)\", \"node-42\", \"\\\\2:\\\\1\")",
        "join(\",\", { \"x\", \"y\", \"z\" }) + \"!\"",
        "sum({ 1, 2.5, 3 }) * ifThenElse(isUndefined(nope), 2, 3)",
        "formatTime(absTime(\"2024-01-01T00:00:00Z\"), \"%Y-%m\")",
        "[ r = [ s = { 1, [ t = \"deep\" ] } ] ].r.s[1].t",
    };
    ads_arena *a = ads_arena_new();
    ads_buf b = ADS_BUF_INIT;
    int rc = 0;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "arena: out of memory");
    for (size_t i = 0; i < sizeof exprs / sizeof *exprs; i++) {
        const ads_expr *e, *p;
        ads_value v;
        rc = ads_expr_parse(&e, a, exprs[i], strlen(exprs[i]), err);
        if (rc)
            goto cleanup;
        rc = ads_expr_prepare(&p, a, e, err);
        if (rc)
            goto cleanup;
        rc = ads_expr_eval(&v, e, NULL, a);
        if (rc) {
            rc = ads_error_set(err, rc, "eval: out of memory");
            goto cleanup;
        }
        ads_expr_unparse(&b, p);
        ads_buf_adds(&b, " -> ");
        ads_value_unparse(&b, &v);
        rc = put_buf(c->out, &b, err);
        if (rc)
            goto cleanup;
    }
    const ads_record *r;
    const char *rt = "[ Name = \"n\"; Req = other.Memory > 10 && Name != \"x\"; L = { 1, 2 } ]";
    rc = ads_record_parse(&r, a, rt, strlen(rt), err);
    if (rc)
        goto cleanup;
    ads_record_unparse(&b, r);
    rc = put_buf(c->out, &b, err);
    if (rc)
        goto cleanup;
    ads_value v;
    rc = ads_record_eval_attr(&v, r, "L", 1, a);
    if (rc) {
        rc = ads_error_set(err, rc, "eval: out of memory");
        goto cleanup;
    }
    ads_value_unparse_condor(&b, &v);
    rc = put_buf(c->out, &b, err);
cleanup:
    ads_buf_free(&b);
    ads_arena_free(a);
    return rc;
}

/* The text readers and writers (classad/formats.h) on a few records each. */
static int read_records(oom_ctx *c, int kind, const char *text, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    ads_buf b = ADS_BUF_INIT;
    void *r = NULL;
    const ads_record *rec;
    int rc, line;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "arena: out of memory");
    size_t len = strlen(text);
    switch (kind) {
    case 0: rc = ads_json_reader_new((ads_json_reader **)&r, text, len, err); break;
    case 1: rc = ads_long_reader_new((ads_long_reader **)&r, text, len, err); break;
    case 2: rc = ads_xml_reader_new((ads_xml_reader **)&r, text, len, err); break;
    default: rc = ads_classad_reader_new((ads_classad_reader **)&r, text, len, err); break;
    }
    if (rc)
        goto cleanup;
    for (;;) {
        switch (kind) {
        case 0: rc = ads_json_reader_next(&rec, &line, r, a, err); break;
        case 1: rc = ads_long_reader_next(&rec, &line, r, a, err); break;
        case 2: rc = ads_xml_reader_next(&rec, &line, r, a, err); break;
        default: rc = ads_classad_reader_next(&rec, &line, r, a, err); break;
        }
        if (rc != 1)
            break;
        /* each record written back in every form */
        rc = ads_json_write(&b, rec, ADS_JSON_COMPACT, err);
        if (!rc)
            rc = ads_long_write(&b, rec, err);
        if (!rc) {
            ads_xml_write_begin(&b);
            rc = ads_xml_write(&b, rec, err);
            ads_xml_write_end(&b);
        }
        if (!rc) {
            ads_record_unparse(&b, rec);
            rc = put_buf(c->out, &b, err);
        }
        if (rc)
            break;
    }
cleanup:
    switch (kind) {
    case 0: ads_json_reader_free(r); break;
    case 1: ads_long_reader_free(r); break;
    case 2: ads_xml_reader_free(r); break;
    default: ads_classad_reader_free(r); break;
    }
    ads_buf_free(&b);
    ads_arena_free(a);
    return rc;
}

static int op_json(oom_ctx *c, ads_error *err)
{
    return read_records(c, 0,
                        "[{\"Name\": \"a\", \"Memory\": 10, \"L\": [1, 2.5, \"x\", null, true],"
                        " \"R\": {\"p\": \"q\", \"n\": -3}, \"E\": \"\\/Expr(Memory * 2)\\/\"},\n"
                        " {\"Name\": \"b\\u00e9\", \"Memory\": 1e3}]",
                        err);
}

static int op_long(oom_ctx *c, ads_error *err)
{
    return read_records(c, 1,
                        "Name = \"a\"\nMemory = 10\nL = { 1, 2.5, \"x\" }\nReq = Memory > 5\n\n"
                        "Name = \"b\"\nR = [ p = \"q\"; n = -3 ]\n",
                        err);
}

static int op_xml(oom_ctx *c, ads_error *err)
{
    return read_records(c, 2,
                        "<?xml version=\"1.0\"?>\n<classads>\n"
                        "<c><a n=\"Name\"><s>a&amp;b</s></a><a n=\"Memory\"><i>10</i></a>"
                        "<a n=\"L\"><l><i>1</i><r>2.5</r><b v=\"t\"/></l></a>"
                        "<a n=\"Req\"><e>Memory &gt; 5</e></a></c>\n"
                        "<c><a n=\"Name\"><s>b</s></a><a n=\"R\"><c><a n=\"p\"><s>q</s></a></c>"
                        "</a></c>\n</classads>\n",
                        err);
}

static int op_classad_text(oom_ctx *c, ads_error *err)
{
    return read_records(c, 3,
                        "[ Name = \"a\"; Memory = 10; L = { 1, 2.5 } ]\n"
                        "[ Name = \"b\"; R = [ p = \"q\" ]; Req = Memory > 5 ]\n",
                        err);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

#define OOM_TEST(fn, store, random, op)                                                       \
    static void fn(void **state)                                                              \
    {                                                                                         \
        (void)state;                                                                          \
        static const oom_case c = {#fn, store, random, op};                                   \
        oom_loop(&c);                                                                         \
    }

OOM_TEST(oom__db_create, OOM_NEW_DIR, true, op_create)
OOM_TEST(oom__db_open_and_store, OOM_DIR, false, op_open_store)
OOM_TEST(oom__txn_store_new_record, OOM_OPEN, false, op_store_new)
OOM_TEST(oom__txn_store_update_keeps_history, OOM_OPEN, false, op_store_update)
OOM_TEST(oom__txn_store_update_two_keys, OOM_OPEN, false, op_store_update_slot)
OOM_TEST(oom__statement_store, OOM_OPEN, false, op_stmt_store)
OOM_TEST(oom__statement_update, OOM_OPEN, false, op_stmt_update)
OOM_TEST(oom__statement_delete, OOM_OPEN, false, op_stmt_delete)
OOM_TEST(oom__statement_purge, OOM_OPEN, false, op_stmt_purge)
OOM_TEST(oom__select_where, OOM_READ, false, op_select_where)
OOM_TEST(oom__select_group_by_order_by, OOM_READ, false, op_select_group)
OOM_TEST(oom__select_star_order_by_limit, OOM_READ, false, op_select_order)
OOM_TEST(oom__select_join, OOM_READ, false, op_select_join)
OOM_TEST(oom__select_timeline_aggregation, OOM_READ, false, op_select_timeline)
OOM_TEST(oom__select_history_rows, OOM_READ, false, op_select_history)
OOM_TEST(oom__scan_and_history, OOM_READ, false, op_scan)
OOM_TEST(oom__bulk_load_backfill, OOM_OPEN, false, op_bulk)
OOM_TEST(oom__snapshot_sync, OOM_OPEN, false, op_sync)
OOM_TEST(oom__dump_msgpack, OOM_READ, false, op_dump_msgpack)
OOM_TEST(oom__dump_text, OOM_READ, false, op_dump_text)
OOM_TEST(oom__restore_msgpack, OOM_OTHER, false, op_restore_msgpack)
OOM_TEST(oom__restore_text, OOM_OTHER, false, op_restore_text)
OOM_TEST(oom__dump_reader, OOM_NO_STORE, false, op_dump_reader)
OOM_TEST(oom__classad_parse_eval_unparse, OOM_NO_STORE, false, op_classad)
OOM_TEST(oom__json_reader_and_writers, OOM_NO_STORE, false, op_json)
OOM_TEST(oom__long_reader, OOM_NO_STORE, false, op_long)
OOM_TEST(oom__xml_reader, OOM_NO_STORE, false, op_xml)
OOM_TEST(oom__classad_reader, OOM_NO_STORE, false, op_classad_text)

/* The wrapper itself: it fails exactly the Nth allocation and tracks what
 * is live, or every loop above would prove nothing. */
static void oom__wrapper_fails_the_nth_allocation_once(void **state)
{
    (void)state;
    /* through volatile pointers, so the compiler cannot drop an unused pair */
    void *(*volatile m)(size_t) = malloc;
    void *(*volatile ca)(size_t, size_t) = calloc;
    void *(*volatile re)(void *, size_t) = realloc;
    char *(*volatile sd)(const char *) = strdup;
    void (*volatile fr)(void *) = free;
    oom_arm(2);
    void *a = m(8);
    void *b = m(8);
    int e_b = errno;
    void *c = ca(2, 8);
    char *d = sd("x");
    oom_disarm();
    assert_non_null(a);
    assert_null(b);
    assert_int_equal(e_b, ENOMEM);
    assert_non_null(c);
    assert_non_null(d);
    assert_true(oom.injected);
    assert_int_equal(oom.calls, 4);
    assert_int_equal(oom.live, 3);
    oom.armed = true; /* track again, fail nothing */
    void *e = re(c, 4096);
    oom_disarm();
    assert_non_null(e);
    assert_int_equal(oom.live, 3); /* moved, not added */
    fr(a);
    fr(e);
    fr(d);
    assert_int_equal(oom.live, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(oom__wrapper_fails_the_nth_allocation_once),
        cmocka_unit_test(oom__db_create),
        cmocka_unit_test(oom__db_open_and_store),
        cmocka_unit_test(oom__txn_store_new_record),
        cmocka_unit_test(oom__txn_store_update_keeps_history),
        cmocka_unit_test(oom__txn_store_update_two_keys),
        cmocka_unit_test(oom__statement_store),
        cmocka_unit_test(oom__statement_update),
        cmocka_unit_test(oom__statement_delete),
        cmocka_unit_test(oom__statement_purge),
        cmocka_unit_test(oom__select_where),
        cmocka_unit_test(oom__select_group_by_order_by),
        cmocka_unit_test(oom__select_star_order_by_limit),
        cmocka_unit_test(oom__select_join),
        cmocka_unit_test(oom__select_timeline_aggregation),
        cmocka_unit_test(oom__select_history_rows),
        cmocka_unit_test(oom__scan_and_history),
        cmocka_unit_test(oom__bulk_load_backfill),
        cmocka_unit_test(oom__snapshot_sync),
        cmocka_unit_test(oom__dump_msgpack),
        cmocka_unit_test(oom__dump_text),
        cmocka_unit_test(oom__restore_msgpack),
        cmocka_unit_test(oom__restore_text),
        cmocka_unit_test(oom__dump_reader),
        cmocka_unit_test(oom__classad_parse_eval_unparse),
        cmocka_unit_test(oom__json_reader_and_writers),
        cmocka_unit_test(oom__long_reader),
        cmocka_unit_test(oom__xml_reader),
        cmocka_unit_test(oom__classad_reader),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]); /* one loop: test_oom 'oom__dump*' */
    return cmocka_run_group_tests(tests, make_template, drop_template);
}
