/*
 * tests/engine/test_dump.c: dump, restore and backup (engine/dump.c,
 * dump_read.c, restore.c, backup.c).
 * A store with every kind of row (keyed, generated, increment and long keys,
 * history, deletes, backfilled rows, expressions, sequences) dumps, restores
 * and dumps again byte for byte, in both formats; restore refuses truncated,
 * corrupt and unknown dumps and non-empty stores and leaves the target as it
 * was; type filters and --new-node; a dump read back as records; a backup
 * taken while another thread writes opens and verifies; the memory of dump
 * and restore does not grow with the number of rows; and a corrupt row is
 * refused by dump (naming its type and key) or left out by a salvage, and
 * refused by restore when a dump carries one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tests/cli/run.h"
#include "tests/engine/helpers.h"

#define T0 1700000000.0

/* ---- a store with everything in it ---- */

static void store_or_fail(ads_db *db, const char *text)
{
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("store %s: %s", text, err.message);
}

static void bulk_backfill(ads_db *db, int n, double from)
{
    ads_bulk *b;
    ads_error err;
    ads_bulk_options o = {.batch = 7, .backfill = true};
    ads_arena *a = ads_arena_new();
    assert_int_equal(ads_bulk_begin(&b, db, &o, &err), 0);
    for (int i = 0; i < n; i++) {
        char text[200], when[40];
        const ads_record *r;
        time_t secs = (time_t)(from + i * 60);
        struct tm tm;
        gmtime_r(&secs, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(text, sizeof text,
                 "[ AdType = \"Job\"; Owner = \"old%d\"; _Timestamp = `%s` ]", i, when);
        assert_int_equal(ads_record_parse(&r, a, text, strlen(text), &err), 0);
        if (ads_bulk_add(b, r, &err))
            fail_msg("bulk: %s", err.message);
    }
    if (ads_bulk_end(b, &err))
        fail_msg("bulk end: %s", err.message);
    ads_arena_free(a);
}

static void fill(tstore *t, ads_db *db, int scale)
{
    ts_declare(db, "Machine", "Name", NULL);
    ts_declare(db, "Job", "", "AutoGenerateKey = true;");
    ts_declare(db, "Event", "", NULL);
    ts_declare(db, "Wide", "Path", NULL);
    store_or_fail(db, "[ AdType = \"Sequence\"; Name = \"tickets\"; Method = \"increment\" ]");
    for (int round = 0; round < 3; round++) {
        ts_time(t, T0 + 10 * round);
        for (int i = 0; i < 10 * scale; i++) {
            char text[300];
            snprintf(text, sizeof text,
                     "[ AdType = \"Machine\"; Name = \"m%03d\"; Memory = %d; Load = %g; "
                     "Busy = Load > 0.5; Tags = { \"a\", %d } ]",
                     i, 1024 * (i + round), 0.25 * round, i);
            store_or_fail(db, text);
        }
        for (int i = 0; i < 5 * scale; i++) {
            char text[200];
            snprintf(text, sizeof text, "[ AdType = \"Job\"; Owner = \"u%d\"; Round = %d ]", i,
                     round);
            store_or_fail(db, text);
            snprintf(text, sizeof text, "[ AdType = \"Event\"; What = \"e%d.%d\" ]", round, i);
            store_or_fail(db, text);
        }
    }
    /* deletes, a record stored again after its deletion, a past row */
    ts_time(t, T0 + 40);
    store_or_fail(db, "[ AdType = \"Machine\"; Name = \"m001\"; _Deleted = true ]");
    store_or_fail(db, "[ AdType = \"Machine\"; Name = \"m002\"; _Deleted = true ]");
    ts_time(t, T0 + 50);
    store_or_fail(db, "[ AdType = \"Machine\"; Name = \"m002\"; Memory = 7 ]");
    store_or_fail(db, "[ AdType = \"Machine\"; Name = \"m003\"; Memory = 3; "
                      "_Timestamp = `2023-11-14T19:26:40Z` ]");
    /* keys longer than a key inline */
    char big[1200];
    for (int i = 0; i < 3; i++) {
        char path[600];
        memset(path, 'p' + i, 500);
        path[500] = '\0';
        snprintf(big, sizeof big, "[ AdType = \"Wide\"; Path = \"%s/%d\"; Size = %d ]", path, i,
                 i);
        store_or_fail(db, big);
    }
    bulk_backfill(db, 20 * scale, T0 - 86400);
    /* sequence and generator state */
    ads_txn *txn;
    ads_error err;
    ads_arena *a = ads_arena_new();
    ads_value v;
    assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "tickets", 7, a, &err), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "tickets", 7, a, &err), 0);
    assert_int_equal(ads_txn_meta_put(txn, "note", "hello", 5, &err), 0);
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    ads_arena_free(a);
}

/* ---- dumping to memory, restoring from memory ---- */

typedef struct mem {
    char *p;
    size_t len;
} mem;

static mem dump_of(ads_db *db, int format, const char *const *types, size_t nt,
                   const char *const *ex, size_t ne)
{
    mem m = {NULL, 0};
    FILE *f = open_memstream(&m.p, &m.len);
    assert_non_null(f);
    ads_dump_options o = {format, types, nt, ex, ne, NULL, NULL};
    ads_dump_result res;
    ads_error err;
    if (ads_db_dump(db, f, &o, &res, &err))
        fail_msg("dump: %s", err.message);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(res.bytes, m.len);
    return m;
}

static int restore_from(const char *dir, const void *p, size_t len, bool new_node,
                        ads_error *err)
{
    FILE *f = fmemopen((void *)p, len, "rb");
    if (!f) /* fmemopen of 0 bytes */
        f = fopen("/dev/null", "rb");
    assert_non_null(f);
    ads_restore_options o = {new_node, NULL, NULL};
    int rc = ads_restore(dir, f, &o, NULL, err);
    fclose(f);
    return rc;
}

static ads_db *open_dir(const char *dir)
{
    ads_db *db;
    ads_error err;
    if (ads_db_open(&db, dir, 0, &err))
        fail_msg("open %s: %s", dir, err.message);
    return db;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Nothing named dir.restoring-* or dir.replaced-* is left beside dir. */
static void no_leftovers(const char *dir)
{
    char p[1300];
    snprintf(p, sizeof p, "%s.restoring-%ld", dir, (long)getpid());
    assert_false(exists(p));
    snprintf(p, sizeof p, "%s.replaced-%ld", dir, (long)getpid());
    assert_false(exists(p));
}

static tstore src;
static ads_db *sdb;
static char *work;

static int setup(void **state)
{
    (void)state;
    sdb = ts_open(&src, T0);
    fill(&src, sdb, 1);
    work = make_temp_dir();
    return work ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ts_close(&src);
    remove_tree(work);
    free(work);
    return 0;
}

static const char *target(const char *name)
{
    static char p[1200];
    snprintf(p, sizeof p, "%s/%s", work, name);
    return p;
}

/* ---- round trips ---- */

static void round_trip__msgpack_dump_restore_dump_is_byte_identical(void **state)
{
    (void)state;
    mem d1 = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    ads_error err;
    const char *dir = target("rt1");
    if (restore_from(dir, d1.p, d1.len, false, &err))
        fail_msg("restore: %s", err.message);
    no_leftovers(dir);
    ads_db *db = open_dir(dir);
    mem d2 = dump_of(db, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    assert_int_equal(d1.len, d2.len);
    assert_memory_equal(d1.p, d2.p, d1.len);
    assert_int_equal(ts_verify(db), 0);
    assert_int_equal(ads_db_node(db), ads_db_node(sdb));
    /* the same records and rows, read back through the engine */
    const char *keys[] = {"{ \"m000\" }", "{ \"m001\" }", "{ \"m002\" }", "{ \"m003\" }"};
    for (size_t i = 0; i < 4; i++) {
        char *a = ts_history(sdb, "Machine", keys[i]), *b = ts_history(db, "Machine", keys[i]);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    assert_int_equal(ts_count(db, "Job", true), ts_count(sdb, "Job", true));
    assert_int_equal(ts_count(db, "Machine", false), ts_count(sdb, "Machine", false));
    ads_db_close(db);
    free(d1.p);
    free(d2.p);
}

static void round_trip__text_dump_restores_to_the_same_store(void **state)
{
    (void)state;
    mem m1 = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    mem t1 = dump_of(sdb, ADS_DUMP_TEXT, NULL, 0, NULL, 0);
    ads_error err;
    const char *dir = target("rt2");
    if (restore_from(dir, t1.p, t1.len, false, &err))
        fail_msg("restore: %s", err.message);
    ads_db *db = open_dir(dir);
    mem m2 = dump_of(db, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    mem t2 = dump_of(db, ADS_DUMP_TEXT, NULL, 0, NULL, 0);
    assert_int_equal(m1.len, m2.len);
    assert_memory_equal(m1.p, m2.p, m1.len);
    assert_int_equal(t1.len, t2.len);
    assert_memory_equal(t1.p, t2.p, t1.len);
    assert_int_equal(ts_verify(db), 0);
    /* text is one item per line, starting with the header */
    assert_true(strncmp(t1.p, "[ Format = \"adstore-dump\"; Version = 1;", 39) == 0);
    assert_non_null(strstr(t1.p, "__Latest = false"));
    assert_non_null(strstr(t1.p, "_Deleted = true"));
    ads_db_close(db);
    free(m1.p);
    free(m2.p);
    free(t1.p);
    free(t2.p);
}

static void round_trip__generators_and_sequences_go_on_where_they_were(void **state)
{
    (void)state;
    mem d = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    ads_error err;
    const char *dir = target("rt3");
    assert_int_equal(restore_from(dir, d.p, d.len, false, &err), 0);
    ads_db *db = open_dir(dir);
    ads_txn *txn;
    ads_arena *a = ads_arena_new();
    ads_value v;
    assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
    assert_int_equal(ads_txn_next_value(&v, txn, "tickets", 7, a, &err), 0);
    assert_int_equal(v.type, ADS_IDENT);
    assert_int_equal(v.u.id.lo, 3); /* two were handed out before the dump */
    ads_str note;
    assert_int_equal(ads_txn_meta_get(txn, "note", &note, &err), 1);
    assert_int_equal(note.len, 5);
    ads_idgen_state s1, s2;
    assert_int_equal(ads_txn_idgen_state(&s2, txn, &err), 0);
    ads_txn_abort(txn);
    assert_int_equal(ads_txn_begin(&txn, sdb, ADS_TXN_READONLY, &err), 0);
    assert_int_equal(ads_txn_idgen_state(&s1, txn, &err), 0);
    ads_txn_abort(txn);
    /* the serialised forms: the structs have padding */
    unsigned char e1[ADS_IDGEN_STATE_BYTES], e2[ADS_IDGEN_STATE_BYTES];
    ads_idgen_state_encode(e1, &s1);
    ads_idgen_state_encode(e2, &s2);
    assert_memory_equal(e1, e2, sizeof e1);
    ads_arena_free(a);
    ads_db_close(db);
    free(d.p);
}

static void restore__new_node_draws_a_new_node_and_generator(void **state)
{
    (void)state;
    mem d = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    ads_error err;
    const char *dir = target("nn");
    assert_int_equal(restore_from(dir, d.p, d.len, true, &err), 0);
    ads_db *db = open_dir(dir);
    assert_int_not_equal(ads_db_node(db), ads_db_node(sdb));
    assert_int_equal(ts_verify(db), 0);
    /* ids from the copy and the original never meet */
    ads_txn *t1, *t2;
    ads_id x[50], y[50];
    assert_int_equal(ads_txn_begin(&t1, sdb, 0, &err), 0);
    assert_int_equal(ads_txn_new_ids(x, 50, NULL, t1, ADS_ID_ORDERED, &err), 0);
    ads_txn_abort(t1);
    assert_int_equal(ads_txn_begin(&t2, db, 0, &err), 0);
    assert_int_equal(ads_txn_new_ids(y, 50, NULL, t2, ADS_ID_ORDERED, &err), 0);
    ads_txn_abort(t2);
    for (int i = 0; i < 50; i++)
        for (int j = 0; j < 50; j++)
            assert_false(x[i].hi == y[j].hi && x[i].lo == y[j].lo);
    ads_db_close(db);
    free(d.p);
}

/* ---- filters ---- */

static void dump__type_filters_keep_types_and_counts_consistent(void **state)
{
    (void)state;
    const char *only[] = {"Machine"};
    const char *ex[] = {"Job", "Event"};
    mem a = dump_of(sdb, ADS_DUMP_MSGPACK, only, 1, NULL, 0);
    mem b = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, ex, 2);
    ads_error err;
    assert_int_equal(restore_from(target("f1"), a.p, a.len, false, &err), 0);
    assert_int_equal(restore_from(target("f2"), b.p, b.len, false, &err), 0);
    ads_db *da = open_dir(target("f1")), *dbb = open_dir(target("f2"));
    assert_int_equal(ts_verify(da), 0);
    assert_int_equal(ts_verify(dbb), 0);
    assert_int_equal(ts_count(da, "Machine", true), ts_count(sdb, "Machine", true));
    assert_int_equal(ts_count(da, "Job", true), 0);
    assert_int_equal(ts_count(da, "Wide", true), 0);
    assert_int_equal(ts_count(dbb, "Job", true), 0);
    assert_int_equal(ts_count(dbb, "Event", true), 0);
    assert_int_equal(ts_count(dbb, "Wide", true), 3);
    assert_int_equal(ts_count(dbb, "Machine", true), ts_count(sdb, "Machine", true));
    /* types are all still declared (Type records always come along) */
    char *t = ts_latest(da, "Type", "{ \"Job\" }");
    assert_non_null(t);
    free(t);
    ads_db_close(da);
    ads_db_close(dbb);
    /* an unknown type in a filter is an error */
    const char *bad[] = {"Nope"};
    FILE *f = fopen("/dev/null", "wb");
    ads_dump_options o = {ADS_DUMP_MSGPACK, bad, 1, NULL, 0, NULL, NULL};
    assert_int_equal(ads_db_dump(sdb, f, &o, NULL, &err), ADS_ENOTFOUND);
    fclose(f);
    free(a.p);
    free(b.p);
}

/* ---- refusals ---- */

/* Restoring must fail with one of the codes and leave dir absent. */
static void must_refuse(const char *what, const void *p, size_t len, int code1, int code2)
{
    const char *dir = target("refused");
    ads_error err;
    int rc = restore_from(dir, p, len, false, &err);
    if (rc != code1 && rc != code2)
        fail_msg("%s: restore returned %d (%s)", what, rc, rc ? err.message : "success");
    assert_true(err.message[0] != '\0');
    assert_false(exists(dir));
    no_leftovers(dir);
}

static void restore__refuses_every_truncation(void **state)
{
    (void)state;
    mem d = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    mem t = dump_of(sdb, ADS_DUMP_TEXT, NULL, 0, NULL, 0);
    char what[64];
    for (int k = 0; k < 2; k++) {
        mem *m = k ? &t : &d;
        size_t cuts[80];
        size_t n = 0;
        cuts[n++] = 0;
        cuts[n++] = 1;
        cuts[n++] = m->len - 1;
        cuts[n++] = m->len - 2;
        for (size_t i = 1; n < 80; i++)
            cuts[n++] = m->len * i / 77;
        for (size_t i = 0; i < n; i++) {
            if (cuts[i] >= m->len)
                continue;
            snprintf(what, sizeof what, "%s cut at %zu of %zu", k ? "text" : "msgpack", cuts[i],
                     m->len);
            must_refuse(what, m->p, cuts[i], ADS_ECORRUPT, ADS_ECORRUPT);
        }
    }
    /* the message says what is wrong */
    ads_error err;
    assert_int_equal(restore_from(target("cut"), d.p, d.len / 2, false, &err), ADS_ECORRUPT);
    assert_non_null(strstr(err.message, "truncated"));
    free(d.p);
    free(t.p);
}

static void restore__refuses_any_changed_byte(void **state)
{
    (void)state;
    mem d = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    mem t = dump_of(sdb, ADS_DUMP_TEXT, NULL, 0, NULL, 0);
    char what[64];
    for (int k = 0; k < 2; k++) {
        mem *m = k ? &t : &d;
        for (size_t i = 0; i < 60; i++) {
            size_t at = i < 20 ? i : i < 40 ? m->len - 1 - (i - 20) : m->len * (i - 40) / 20;
            char *copy = malloc(m->len);
            memcpy(copy, m->p, m->len);
            /* text: a different printable byte keeps the line a line */
            copy[at] = k ? (char)(copy[at] == 'x' ? 'y' : 'x') : (char)(copy[at] ^ 0x20);
            if (k && (m->p[at] == '\n'))
                copy[at] = '\n';
            if (copy[at] != m->p[at]) {
                snprintf(what, sizeof what, "%s byte %zu changed", k ? "text" : "msgpack", at);
                must_refuse(what, copy, m->len, ADS_ECORRUPT, ADS_EVERSION);
            }
            free(copy);
        }
    }
    /* the text trailer's End, which its checksum does not cover */
    char *end = strstr(t.p, "[ End = true;");
    assert_non_null(end);
    char *tcopy = malloc(t.len);
    memcpy(tcopy, t.p, t.len);
    tcopy[end - t.p + 8] = 'x';
    must_refuse("text End = xrue", tcopy, t.len, ADS_ECORRUPT, ADS_ECORRUPT);
    free(tcopy);
    ads_error err;
    char *copy = malloc(d.len);
    memcpy(copy, d.p, d.len);
    copy[d.len / 2] ^= 1;
    assert_int_not_equal(restore_from(target("flip"), copy, d.len, false, &err), 0);
    free(copy);
    /* bytes after the trailer */
    char *more = malloc(d.len + 1);
    memcpy(more, d.p, d.len);
    more[d.len] = 0;
    must_refuse("a byte after the trailer", more, d.len + 1, ADS_ECORRUPT, ADS_ECORRUPT);
    free(more);
    free(d.p);
    free(t.p);
}

static void restore__refuses_unknown_versions_and_other_files(void **state)
{
    (void)state;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2);
    msgpack_pack_str_with_body(&pk, "format", 6);
    msgpack_pack_str_with_body(&pk, "adstore-dump", 12);
    msgpack_pack_str_with_body(&pk, "version", 7);
    msgpack_pack_int(&pk, 2);
    ads_error err;
    assert_int_equal(restore_from(target("v2"), sb.data, sb.size, false, &err), ADS_EVERSION);
    assert_string_equal(err.message, "the dump is of format version 2; this build reads version 1");
    assert_false(exists(target("v2")));
    msgpack_sbuffer_destroy(&sb);

    const char *text2 = "[ Format = \"adstore-dump\"; Version = 7 ]\n";
    assert_int_equal(restore_from(target("v7"), text2, strlen(text2), false, &err), ADS_EVERSION);
    const char *other = "[ A = 1 ]\n";
    assert_int_equal(restore_from(target("o"), other, strlen(other), false, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, "this is not an adstore dump");
    assert_int_equal(restore_from(target("e"), "", 0, false, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, "the dump is empty");
    const char *json = "{\"a\": 1}";
    assert_int_equal(restore_from(target("j"), json, strlen(json), false, &err), ADS_ECORRUPT);
}

/* A text dump with its trailer's checksum made anew for its bytes (as a dump
 * that a build with other limits wrote would be). */
static void retrail_text(mem *d)
{
    static const char end[] = "\n[ End = true;";
    char *t = NULL;
    for (char *p = d->p; (p = memmem(p, d->len - (size_t)(p - d->p), end, sizeof end - 1));
         p++)
        t = p + 1;
    assert_non_null(t);
    size_t before = (size_t)(t - d->p);
    char line[160];
    size_t ll = d->len - before < sizeof line - 1 ? d->len - before : sizeof line - 1;
    memcpy(line, t, ll);
    line[ll] = '\0';
    unsigned long long meta, rows;
    assert_int_equal(sscanf(line, "[ End = true; Meta = %llu; Rows = %llu;", &meta, &rows), 2);
    char trailer[160];
    int n = snprintf(trailer, sizeof trailer,
                     "[ End = true; Meta = %llu; Rows = %llu; Checksum = \"%016llx\" ]\n", meta,
                     rows, (unsigned long long)XXH3_64bits(d->p, before));
    d->p = realloc(d->p, before + (size_t)n);
    memcpy(d->p + before, trailer, (size_t)n);
    d->len = before + (size_t)n;
}

static void restore__refuses_a_name_over_the_limit(void **state)
{
    (void)state;
    /* a record with a name of 200 bytes, the limit; the dump's text then
     * names it with 201 */
    tstore t;
    ads_db *db = ts_open(&t, T0);
    ts_declare(db, "Machine", "Name", NULL);
    char name[ADS_MAX_NAME_LEN + 2], text[400];
    memset(name, 'n', ADS_MAX_NAME_LEN);
    name[0] = 'N';
    name[ADS_MAX_NAME_LEN] = '\0';
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"m\"; %s = 1 ]", name);
    store_or_fail(db, text);
    mem d = dump_of(db, ADS_DUMP_TEXT, NULL, 0, NULL, 0);
    ads_error err;
    assert_int_equal(restore_from(target("limit-ok"), d.p, d.len, false, &err), 0);
    /* every spelling of the name in the dump (the row, its Attribute
     * record) one byte longer */
    mem longer = {NULL, 0};
    FILE *f = open_memstream(&longer.p, &longer.len);
    for (const char *p = d.p, *end = d.p + d.len; p < end;) {
        const char *hit = memmem(p, (size_t)(end - p), name, ADS_MAX_NAME_LEN);
        size_t upto = hit ? (size_t)(hit - p) + ADS_MAX_NAME_LEN : (size_t)(end - p);
        fwrite(p, 1, upto, f);
        if (hit)
            fputc('n', f);
        p += upto;
    }
    assert_int_equal(fclose(f), 0);
    assert_int_equal(longer.len, d.len + 2);
    retrail_text(&longer);
    const char *dir = target("limit-over");
    assert_int_equal(restore_from(dir, longer.p, longer.len, false, &err), ADS_ELIMIT);
    if (!strstr(err.message, "has 201 bytes, over the limit of 200"))
        fail_msg("restore: %s", err.message);
    assert_false(exists(dir));
    free(longer.p);
    free(d.p);
    ts_close(&t);
}

static void restore__refuses_a_key_over_the_limit(void **state)
{
    (void)state;
    /* a record keyed by a name of 1,000 bytes; the dump's text then spells
     * the name with 1 MiB + 1 bytes, a key a few bytes over the 1 MiB a key
     * may take (its type id and its string's tag come with it) */
    tstore t;
    ads_db *db = ts_open(&t, T0);
    ts_declare(db, "Machine", "Name", NULL);
    char key[1001], text[1200];
    memset(key, 'k', 1000);
    key[1000] = '\0';
    snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"%s\"; Memory = 1 ]", key);
    store_or_fail(db, text);
    mem d = dump_of(db, ADS_DUMP_TEXT, NULL, 0, NULL, 0);
    const char *hit = memmem(d.p, d.len, key, 1000);
    assert_non_null(hit);
    size_t at = (size_t)(hit - d.p), more = ADS_KEY_MAX_LEN - 1000 + 1;
    mem big = {malloc(d.len + more), d.len + more};
    memcpy(big.p, d.p, at);
    memset(big.p + at, 'k', 1000 + more);
    memcpy(big.p + at + 1000 + more, hit + 1000, d.len - at - 1000);
    retrail_text(&big);
    ads_error err;
    const char *dir = target("key-over");
    assert_int_equal(restore_from(dir, big.p, big.len, false, &err), ADS_ELIMIT);
    if (!strstr(err.message, "over the 1 MiB limit"))
        fail_msg("restore: %s", err.message);
    assert_false(exists(dir));
    free(big.p);
    free(d.p);
    ts_close(&t);
}

static void restore__refuses_a_store_with_rows_and_keeps_it(void **state)
{
    (void)state;
    mem d = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    ads_error err;
    /* the source store itself */
    size_t before = ts_count(sdb, "Machine", true);
    ts_reopen_close(&src);
    assert_int_equal(restore_from(src.path, d.p, d.len, false, &err), ADS_EEXIST);
    assert_non_null(strstr(err.message, "restore needs an empty store"));
    sdb = ts_reopen(&src);
    assert_int_equal(ts_count(sdb, "Machine", true), before);
    /* a directory with other files in it */
    const char *dir = target("junk");
    assert_int_equal(mkdir(dir, 0700), 0);
    char f[1300];
    snprintf(f, sizeof f, "%s/file", dir);
    FILE *fp = fopen(f, "w");
    fclose(fp);
    assert_int_equal(restore_from(dir, d.p, d.len, false, &err), ADS_EEXIST);
    assert_true(exists(f));
    /* an empty directory and an empty store are fine */
    const char *e1 = target("emptydir");
    assert_int_equal(mkdir(e1, 0700), 0);
    assert_int_equal(restore_from(e1, d.p, d.len, false, &err), 0);
    const char *e2 = target("emptystore");
    ads_db *db;
    assert_int_equal(ads_db_open(&db, e2, ADS_DB_CREATE, &err), 0);
    ads_db_close(db);
    assert_int_equal(restore_from(e2, d.p, d.len, false, &err), 0);
    no_leftovers(e2);
    db = open_dir(e2);
    assert_int_equal(ads_db_node(db), ads_db_node(sdb));
    assert_int_equal(ts_verify(db), 0);
    ads_db_close(db);
    /* and a refused restore into an empty store leaves that store */
    const char *e3 = target("emptystore2");
    assert_int_equal(ads_db_open(&db, e3, ADS_DB_CREATE, &err), 0);
    uint64_t node = ads_db_node(db);
    ads_db_close(db);
    assert_int_equal(restore_from(e3, d.p, d.len - 3, false, &err), ADS_ECORRUPT);
    db = open_dir(e3);
    assert_int_equal(ads_db_node(db), node);
    ads_db_close(db);
    no_leftovers(e3);
    free(d.p);
}

/* ---- a dump read as records ---- */

static void dump_reader__rows_come_back_as_records_oldest_first(void **state)
{
    (void)state;
    mem d = dump_of(sdb, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    mem t = dump_of(sdb, ADS_DUMP_TEXT, NULL, 0, NULL, 0);
    for (int k = 0; k < 2; k++) {
        mem *m = k ? &t : &d;
        FILE *f = fmemopen(m->p, m->len, "rb");
        ads_dump_reader *r;
        ads_error err;
        assert_int_equal(ads_dump_reader_new(&r, f, &err), 0);
        ads_arena *a = ads_arena_new();
        const ads_record *rec;
        int rc, n = 0, m000 = 0;
        double last = 0;
        while ((rc = ads_dump_reader_next(&rec, r, a, &err)) == 1) {
            n++;
            assert_non_null(ads_record_lookup(rec, "_Timestamp", 10));
            assert_non_null(ads_record_lookup(rec, "_Deleted", 8));
            assert_null(ads_record_lookup(rec, "__Latest", 8));
            assert_null(ads_record_lookup(rec, "__SystemTimestamp", 17));
            ads_value v;
            if (ads_record_eval_attr(&v, rec, "Name", 4, a) == 0 && v.type == ADS_STRING &&
                v.u.s.len == 4 && memcmp(v.u.s.p, "m000", 4) == 0) {
                ads_value ts;
                assert_int_equal(ads_record_eval_attr(&ts, rec, "_Timestamp", 10, a), 0);
                assert_true(ts.u.abs.secs >= last);
                last = ts.u.abs.secs;
                m000++;
            }
            ads_arena_reset(a);
        }
        if (rc)
            fail_msg("reader: %s", err.message);
        assert_int_equal(m000, 3);
        assert_true(n > 100);
        ads_dump_reader_free(r);
        ads_arena_free(a);
        fclose(f);
    }
    /* a damaged dump fails at its end, as restore does */
    d.p[d.len / 2] ^= 0x01;
    FILE *f = fmemopen(d.p, d.len, "rb");
    ads_dump_reader *r;
    ads_error err;
    ads_arena *a = ads_arena_new();
    const ads_record *rec;
    int rc;
    assert_int_equal(ads_dump_reader_new(&r, f, &err), 0);
    while ((rc = ads_dump_reader_next(&rec, r, a, &err)) == 1)
        ads_arena_reset(a);
    assert_int_equal(rc, ADS_ECORRUPT);
    ads_dump_reader_free(r);
    ads_arena_free(a);
    fclose(f);
    free(d.p);
    free(t.p);
}

/* ---- backup ---- */

typedef struct writer {
    ads_db *db;
    volatile int stop;
    int stored;
    int failed;
} writer;

static void *write_loop(void *arg)
{
    writer *w = arg;
    ads_error err;
    ads_arena *a = ads_arena_new();
    while (!w->stop) {
        ads_txn *txn;
        if (ads_txn_begin(&txn, w->db, 0, &err)) {
            w->failed++;
            break;
        }
        for (int i = 0; i < 50; i++) {
            char text[200];
            const ads_record *r;
            snprintf(text, sizeof text,
                     "[ AdType = \"Machine\"; Name = \"w%05d\"; Memory = %d; Pad = \"%0100d\" ]",
                     (w->stored + i) % 3000, w->stored + i, 0);
            if (ads_record_parse(&r, a, text, strlen(text), &err) ||
                ads_txn_store(txn, r, NULL, &err))
                w->failed++;
        }
        if (ads_txn_commit(txn, &err))
            w->failed++;
        w->stored += 50;
        ads_arena_reset(a);
    }
    ads_arena_free(a);
    return NULL;
}

static void backup__during_writes_is_consistent_and_opens(void **state)
{
    (void)state;
    tstore t;
    ads_db *db;
    ads_error err;
    db = ts_open(&t, T0);
    ts_declare(db, "Machine", "Name", NULL);
    writer w = {db, 0, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, write_loop, &w), 0);
    size_t last = 0;
    for (int k = 0; k < 3; k++) {
        while (w.stored < 2000 * (k + 1))
            usleep(1000);
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/backup%d", work, k);
        if (ads_db_backup(db, dir, &err))
            fail_msg("backup: %s", err.message);
        ads_db *b = open_dir(dir);
        assert_int_equal(ts_verify(b), 0);
        size_t n = ts_count(b, "Machine", true);
        assert_true(n > 0 && n >= last);
        last = n;
        ads_db_close(b);
        struct stat st;
        char data[1300];
        snprintf(data, sizeof data, "%s/data.mdb", dir);
        assert_int_equal(stat(data, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(stat(dir, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
    }
    w.stop = 1;
    pthread_join(th, NULL);
    assert_int_equal(w.failed, 0);
    /* a backup into a directory holding rows is refused */
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/backup0", work);
    assert_int_equal(ads_db_backup(db, dir, &err), ADS_EEXIST);
    ts_close(&t);
}

/* ---- memory ---- */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN
/* The process's anonymous resident memory in KiB (heap, not the store's
 * mapped file). */
static long rss_anon_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static long peak_kib;

static void sample(void *ctx, uint64_t done, uint64_t total)
{
    (void)ctx;
    (void)done;
    (void)total;
    long kb = rss_anon_kib();
    if (kb > peak_kib)
        peak_kib = kb;
}

/* In a child process: dump a store of n Machine rows to a file, then restore
 * it; report the peak anonymous memory of each through a pipe. */
static void peaks(int n, long *dump_kib, long *restore_kib)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        char dir[1200], file[1200], out[1200];
        snprintf(dir, sizeof dir, "%s/mem%d", work, n);
        snprintf(file, sizeof file, "%s/mem%d.dump", work, n);
        snprintf(out, sizeof out, "%s/mem%d.restored", work, n);
        ads_db *db;
        ads_error err;
        ads_bulk *b;
        ads_db_options o = {(size_t)1 << 28};
        if (ads_db_open_ex(&db, dir, ADS_DB_CREATE | ADS_DB_NOSYNC, &o, &err))
            _exit(2);
        ads_arena *a = ads_arena_new();
        const ads_record *r;
        const char *type = "[ AdType = \"Type\"; ForType = \"Machine\"; KeyAttributes = { \"Name\" } ]";
        ads_record_parse(&r, a, type, strlen(type), &err);
        ads_bulk_options bo = {.batch = 10000};
        if (ads_bulk_begin(&b, db, &bo, &err) || ads_bulk_add(b, r, &err))
            _exit(3);
        for (int i = 0; i < n; i++) {
            char text[300];
            ads_arena_reset(a);
            snprintf(text, sizeof text,
                     "[ AdType = \"Machine\"; Name = \"m%07d\"; Memory = %d; Arch = \"x86_64\"; "
                     "Load = %d.5; Pad = \"%060d\" ]",
                     i, i, i % 7, i);
            if (ads_record_parse(&r, a, text, strlen(text), &err) || ads_bulk_add(b, r, &err))
                _exit(4);
        }
        if (ads_bulk_end(b, &err))
            _exit(5);
        ads_arena_free(a);
        FILE *f = fopen(file, "wb");
        peak_kib = rss_anon_kib();
        long base = peak_kib;
        ads_dump_options dopt = {ADS_DUMP_MSGPACK, NULL, 0, NULL, 0, sample, NULL};
        if (ads_db_dump(db, f, &dopt, NULL, &err))
            _exit(6);
        fclose(f);
        long dpeak = peak_kib - base;
        ads_db_close(db);
        f = fopen(file, "rb");
        peak_kib = rss_anon_kib();
        base = peak_kib;
        ads_restore_options ro = {false, sample, NULL};
        if (ads_restore(out, f, &ro, NULL, &err)) {
            fprintf(stderr, "restore: %s\n", err.message);
            _exit(7);
        }
        fclose(f);
        long rpeak = peak_kib - base;
        long both[2] = {dpeak, rpeak};
        if (write(fds[1], both, sizeof both) != (ssize_t)sizeof both)
            _exit(8);
        _exit(0);
    }
    close(fds[1]);
    long both[2] = {-1, -1};
    ssize_t got = read(fds[0], both, sizeof both);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof both)
        fail_msg("memory child failed: status %d", status);
    *dump_kib = both[0];
    *restore_kib = both[1];
}

#endif

static void memory__dump_and_restore_stay_flat(void **state)
{
    (void)state;
#ifdef UNDER_ASAN
    skip(); /* AddressSanitizer's quarantine keeps freed memory resident */
#else
    long d1, r1, d2, r2;
    peaks(60000, &d1, &r1);
    peaks(240000, &d2, &r2);
    print_message("anonymous memory growth: dump %ld -> %ld KiB, restore %ld -> %ld KiB "
                  "(60000 -> 240000 rows)\n",
                  d1, d2, r1, r2);
    /* four times the rows: no more than a few MiB more memory */
    assert_true(d2 <= d1 + 4096);
    assert_true(r2 <= r1 + 8192);
#endif
}

/* ---- corrupt rows do not travel ---- */

/* A small store of its own whose latest row n (in key order) has one bit
 * flipped near its end, as a failing disk would leave it. */
static char *corrupt_store(tstore *t, int n)
{
    ads_db *db = ts_open(t, T0);
    ts_declare(db, "Machine", "Name", NULL);
    ads_error err;
    for (int i = 0; i < 6; i++) {
        char text[200];
        snprintf(text, sizeof text, "[ AdType = \"Machine\"; Name = \"m%d\"; Memory = %d ]", i,
                 i * 100);
        if (ts_store(db, &err, text))
            fail_msg("%s", err.message);
    }
    ts_reopen_close(t);
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *c;
    MDB_val k, v;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, t->path, 0, 0600), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "latest", 0, &dbi), 0);
    assert_int_equal(mdb_cursor_open(txn, dbi, &c), 0);
    int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
    for (int i = 0; i < n && rc == 0; i++)
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    assert_int_equal(rc, 0);
    unsigned char *copy = malloc(v.mv_size);
    memcpy(copy, v.mv_data, v.mv_size);
    copy[v.mv_size - 2] ^= 0x10;
    MDB_val nv = {v.mv_size, copy}, kc = k;
    mdb_cursor_close(c);
    assert_int_equal(mdb_put(txn, dbi, &kc, &nv, 0), 0);
    free(copy);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    return t->path;
}

typedef struct bad_rows {
    int n;
    char first[300];
} bad_rows;

static void note_bad_row(void *ctx, const char *what)
{
    bad_rows *b = ctx;
    if (b->n++ == 0)
        snprintf(b->first, sizeof b->first, "%s", what);
}

static void dump__refuses_a_corrupt_row_naming_type_and_key(void **state)
{
    (void)state;
    tstore t;
    /* latest: the Type record, 3 Attribute records, then m0, m1, ...: m2 */
    corrupt_store(&t, 6);
    ads_db *db = ts_reopen(&t);
    for (int format = 0; format < 2; format++) {
        char *p = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&p, &len);
        ads_dump_options o = {format, NULL, 0, NULL, 0, NULL, NULL, false, NULL};
        ads_dump_result res;
        ads_error err;
        assert_int_equal(ads_db_dump(db, f, &o, &res, &err), ADS_ECORRUPT);
        assert_string_equal(err.message, "type Machine, key { \"m2\" }: latest row: row checksum "
                                         "mismatch (the row is corrupt)");
        fclose(f);
        free(p);
    }
    ts_close(&t);
}

static void dump__salvage_leaves_bad_rows_out_and_lists_them(void **state)
{
    (void)state;
    tstore t;
    corrupt_store(&t, 6);
    ads_db *db = ts_reopen(&t);
    char *p = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&p, &len);
    bad_rows bad = {0, ""};
    ads_dump_options o = {ADS_DUMP_MSGPACK, NULL, 0, NULL, 0, NULL, &bad, true, note_bad_row};
    ads_dump_result res;
    ads_error err;
    assert_int_equal(ads_db_dump(db, f, &o, &res, &err), 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(res.skipped, 1);
    assert_int_equal(bad.n, 1);
    assert_string_equal(bad.first, "type Machine, key { \"m2\" }: latest row: row checksum "
                                   "mismatch (the row is corrupt)");
    /* the rest restores, without the bad row */
    const char *dir = target("salvaged");
    assert_int_equal(restore_from(dir, p, len, false, &err), 0);
    ads_db *copy = open_dir(dir);
    assert_int_equal(ts_count(copy, "Machine", true), 5);
    char *m2 = ts_latest(copy, "Machine", "{ \"m2\" }");
    assert_null(m2);
    ads_db_close(copy);
    free(p);
    ts_close(&t);
}

/* A msgpack dump whose item n (0: the first after the header) has its
 * value's byte at (value length - back) flipped, with a trailer made anew so
 * its counts and checksum match: a dump of a corrupt row, as a build that did
 * not check rows would have written it. */
static mem redo_dump_with(const mem *d, int n, size_t back, const void *repl, size_t repl_len);

static mem redo_dump(const mem *d, int n, size_t back)
{
    return redo_dump_with(d, n, back, NULL, 0);
}

/* The same, item n's value replaced by repl (repl_len bytes) when repl is
 * set. */
static mem redo_dump_with(const mem *d, int n, size_t back, const void *repl, size_t repl_len)
{
    mem out = {NULL, 0};
    FILE *f = open_memstream(&out.p, &out.len);
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0, prev = 0;
    int item = -1;
    uint64_t meta = 0, rows = 0;
    XXH3_state_t *h = XXH3_createState();
    XXH3_64bits_reset(h);
    while (msgpack_unpack_next(&u, d->p, d->len, &off) == MSGPACK_UNPACK_SUCCESS) {
        char *bytes = malloc(off - prev);
        memcpy(bytes, d->p + prev, off - prev);
        if (u.data.type == MSGPACK_OBJECT_ARRAY) {
            const msgpack_object *val = &u.data.via.array.ptr[2];
            if (u.data.via.array.ptr[0].via.u64 == 0)
                meta++;
            else
                rows++;
            if (item == n && repl) {
                msgpack_sbuffer sb;
                msgpack_sbuffer_init(&sb);
                msgpack_packer pk;
                msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
                const msgpack_object *a = u.data.via.array.ptr;
                msgpack_pack_array(&pk, 3);
                msgpack_pack_uint64(&pk, a[0].via.u64);
                msgpack_pack_bin(&pk, a[1].via.bin.size);
                msgpack_pack_bin_body(&pk, a[1].via.bin.ptr, a[1].via.bin.size);
                msgpack_pack_bin(&pk, repl_len);
                msgpack_pack_bin_body(&pk, repl, repl_len);
                fwrite(sb.data, 1, sb.size, f);
                XXH3_64bits_update(h, sb.data, sb.size);
                msgpack_sbuffer_destroy(&sb);
                free(bytes);
                item++;
                prev = off;
                continue;
            }
            if (item == n) {
                size_t at = (size_t)(val->via.bin.ptr - (d->p + prev)) + val->via.bin.size - back;
                bytes[at] ^= 0x10;
            }
        }
        if (item >= 0 && u.data.type == MSGPACK_OBJECT_MAP) {
            free(bytes);
            break; /* the old trailer */
        }
        fwrite(bytes, 1, off - prev, f);
        XXH3_64bits_update(h, bytes, off - prev);
        free(bytes);
        item++;
        prev = off;
    }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 4);
    msgpack_pack_str_with_body(&pk, "end", 3);
    msgpack_pack_true(&pk);
    msgpack_pack_str_with_body(&pk, "meta", 4);
    msgpack_pack_uint64(&pk, meta);
    msgpack_pack_str_with_body(&pk, "rows", 4);
    msgpack_pack_uint64(&pk, rows);
    msgpack_pack_str_with_body(&pk, "checksum", 8);
    msgpack_pack_uint64(&pk, XXH3_64bits_digest(h));
    fwrite(sb.data, 1, sb.size, f);
    msgpack_sbuffer_destroy(&sb);
    XXH3_freeState(h);
    msgpack_unpacked_destroy(&u);
    fclose(f);
    return out;
}

static void restore__refuses_a_dump_carrying_a_corrupt_row(void **state)
{
    (void)state;
    tstore t;
    ads_db *db = ts_open(&t, T0);
    ts_declare(db, "Machine", "Name", NULL);
    ads_error err;
    assert_int_equal(ts_store(db, &err, "[ AdType = \"Machine\"; Name = \"m0\"; Memory = 1 ]"), 0);
    mem d = dump_of(db, ADS_DUMP_MSGPACK, NULL, 0, NULL, 0);
    /* the unchanged dump goes through the rebuilding: the fault is the row */
    mem same = redo_dump(&d, -2, 0);
    assert_int_equal(same.len, d.len);
    assert_memory_equal(same.p, d.p, d.len);
    /* items: the meta entries, then Type, 3 Attribute, Machine m0 (the last) */
    int items = 0;
    {
        msgpack_unpacked u;
        msgpack_unpacked_init(&u);
        size_t off = 0;
        while (msgpack_unpack_next(&u, d.p, d.len, &off) == MSGPACK_UNPACK_SUCCESS)
            items++;
        msgpack_unpacked_destroy(&u);
    }
    mem bad = redo_dump(&d, items - 3, 2); /* items less the header, trailer: the last row */
    const char *dir = target("carried");
    assert_int_equal(restore_from(dir, bad.p, bad.len, false, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, "the dump is corrupt: type Machine, key { \"m0\" }: latest "
                                     "row: row checksum mismatch (the row is corrupt)");
    assert_false(exists(dir));
    no_leftovers(dir);
    /* the row sound but in the packed envelope a store keeps (version 2,
     * in UTC, its dates in it): not a dump's row */
    const msgpack_object *row = NULL;
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    for (int i = 0; i < items - 2; i++) /* the header, then every item but the trailer */
        assert_int_equal(msgpack_unpack_next(&u, d.p, d.len, &off), MSGPACK_UNPACK_SUCCESS);
    row = &u.data.via.array.ptr[2];
    ts_env e;
    assert_int_equal(ts_env_read(&e, row->via.bin.ptr, row->via.bin.size, NULL, 0), 0);
    assert_int_equal(e.version, 1);
    assert_int_equal(e.offset, 0);
    unsigned char packed[512];
    size_t plen = 0;
    packed[4] = 2;
    packed[5] = (unsigned char)e.flags;
    packed[6] = 0; /* UTC */
    memcpy(packed + 7, row->via.bin.ptr + 8, 8);
    memcpy(packed + 15, row->via.bin.ptr + 24, 8);
    plen = 23 + row->via.bin.size - 32;
    assert_true(plen <= sizeof packed);
    memcpy(packed + 23, row->via.bin.ptr + 32, row->via.bin.size - 32);
    uint32_t sum = (uint32_t)XXH3_64bits(packed + 4, plen - 4);
    memcpy(packed, &sum, 4);
    mem other = redo_dump_with(&d, items - 3, 0, packed, plen);
    msgpack_unpacked_destroy(&u);
    assert_int_equal(restore_from(dir, other.p, other.len, false, &err), ADS_ECORRUPT);
    assert_string_equal(err.message, "the dump is corrupt: type Machine, key { \"m0\" }: latest "
                                     "row: a row of envelope version 2 (a dump's rows have "
                                     "version 1)");
    assert_false(exists(dir));
    free(other.p);
    free(same.p);
    free(bad.p);
    free(d.p);
    ts_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip__msgpack_dump_restore_dump_is_byte_identical),
        cmocka_unit_test(round_trip__text_dump_restores_to_the_same_store),
        cmocka_unit_test(round_trip__generators_and_sequences_go_on_where_they_were),
        cmocka_unit_test(restore__new_node_draws_a_new_node_and_generator),
        cmocka_unit_test(dump__type_filters_keep_types_and_counts_consistent),
        cmocka_unit_test(restore__refuses_every_truncation),
        cmocka_unit_test(restore__refuses_any_changed_byte),
        cmocka_unit_test(restore__refuses_unknown_versions_and_other_files),
        cmocka_unit_test(restore__refuses_a_name_over_the_limit),
        cmocka_unit_test(restore__refuses_a_key_over_the_limit),
        cmocka_unit_test(restore__refuses_a_store_with_rows_and_keeps_it),
        cmocka_unit_test(dump_reader__rows_come_back_as_records_oldest_first),
        cmocka_unit_test(backup__during_writes_is_consistent_and_opens),
        cmocka_unit_test(memory__dump_and_restore_stay_flat),
        cmocka_unit_test(dump__refuses_a_corrupt_row_naming_type_and_key),
        cmocka_unit_test(dump__salvage_leaves_bad_rows_out_and_lists_them),
        cmocka_unit_test(restore__refuses_a_dump_carrying_a_corrupt_row),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
