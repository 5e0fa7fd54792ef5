/*
 * tests/engine/helpers.c: see helpers.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tests/cli/run.h"
#include "tests/engine/helpers.h"

static int64_t fake_now(void *ctx)
{
    return ((tstore *)ctx)->ns;
}

static void fake_sleep(void *ctx, int64_t ns)
{
    ((tstore *)ctx)->ns += ns;
}

static void set_clock(tstore *t)
{
    ads_clock c = {fake_now, fake_sleep, t};
    ads_db_set_clock(t->db, &c);
}

ads_db *ts_open(tstore *t, double secs)
{
    memset(t, 0, sizeof *t);
    t->dir = make_temp_dir();
    assert_non_null(t->dir);
    snprintf(t->path, sizeof t->path, "%s/db", t->dir);
    ads_error err;
    if (ads_db_open(&t->db, t->path, ADS_DB_CREATE, &err))
        fail_msg("open: %s", err.message);
    t->ns = (int64_t)(secs * 1e9);
    set_clock(t);
    return t->db;
}

void ts_reopen_close(tstore *t)
{
    ads_db_close(t->db);
    t->db = NULL;
}

ads_db *ts_reopen(tstore *t)
{
    ads_error err;
    if (ads_db_open(&t->db, t->path, 0, &err))
        fail_msg("reopen: %s", err.message);
    set_clock(t);
    return t->db;
}

void ts_close(tstore *t)
{
    ads_db_close(t->db);
    remove_tree(t->dir);
    free(t->dir);
    memset(t, 0, sizeof *t);
}

void ts_time(tstore *t, double secs)
{
    t->ns = (int64_t)(secs * 1e9);
}

int ts_store(ads_db *db, ads_error *err, const char *text)
{
    ads_arena *a = ads_arena_new();
    ads_txn *txn;
    const ads_value *items = NULL;
    size_t n = 1;
    ads_value v;
    const ads_record *one = NULL;
    int rc;
    while (*text == ' ')
        text++;
    if (*text == '[') {
        /* one record, stored as written (expressions kept) */
        rc = ads_record_parse(&one, a, text, strlen(text), err);
    } else {
        /* a list of records, evaluated */
        const ads_expr *e;
        rc = ads_expr_parse(&e, a, text, strlen(text), err);
        if (!rc) {
            ads_expr_eval(&v, e, NULL, a);
            if (v.type != ADS_LIST)
                rc = ads_error_set(err, ADS_EINVAL, "not a list of records");
            items = v.u.list.items;
            n = v.u.list.n;
        }
    }
    if (rc || (rc = ads_txn_begin(&txn, db, 0, err))) {
        ads_arena_free(a);
        return rc;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        const ads_record *r = one;
        if (!one) {
            if (items[i].type != ADS_RECORD) {
                rc = ads_error_set(err, ADS_EINVAL, "not a record");
                break;
            }
            r = items[i].u.rec;
        }
        rc = ads_txn_store(txn, r, NULL, err);
    }
    if (rc)
        ads_txn_abort(txn);
    else
        rc = ads_txn_commit(txn, err);
    ads_arena_free(a);
    return rc;
}

int ts_txn_store(ads_txn *txn, const char *text, ads_error *err)
{
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    int rc = a ? ads_record_parse(&r, a, text, strlen(text), err)
               : ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (!rc)
        rc = ads_txn_store(txn, r, NULL, err);
    ads_arena_free(a);
    return rc;
}

void ts_declare(ads_db *db, const char *type, const char *keys, const char *extra)
{
    char text[1024], list[512] = "";
    size_t n = 0;
    for (const char *p = keys; *p;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        n += (size_t)snprintf(list + n, sizeof list - n, "%s\"%.*s\"", n ? ", " : "", (int)len, p);
        p += len + (q != NULL);
    }
    snprintf(text, sizeof text, "[ AdType = \"Type\"; ForType = \"%s\"; KeyAttributes = { %s }; %s ]",
             type, list, extra ? extra : "");
    ads_error err;
    if (ts_store(db, &err, text))
        fail_msg("declare %s: %s", type, err.message);
}

static int get_row(ads_txn *txn, ads_row *row, const char *type, const char *key, ads_arena *a)
{
    const ads_type *t;
    ads_error err;
    if (ads_txn_type(&t, txn, type, strlen(type), &err))
        fail_msg("type %s: %s", type, err.message);
    const ads_expr *e;
    ads_value v;
    if (ads_expr_parse(&e, a, key, strlen(key), &err))
        fail_msg("key %s: %s", key, err.message);
    ads_expr_eval(&v, e, NULL, a);
    assert_int_equal(v.type, ADS_LIST);
    int rc = ads_txn_get(txn, row, t, v.u.list.items, v.u.list.n, a, &err);
    if (rc < 0)
        fail_msg("get: %s", err.message);
    return rc;
}

/* Row text: attributes, then the timeline attributes but __SystemTimestamp. */
static void row_text(ads_buf *b, const ads_row *row, ads_arena *a)
{
    const ads_record *r;
    ads_error err;
    if (ads_row_record(&r, row, ADS_ROW_TIMELINE, a, &err))
        fail_msg("decode: %s", err.message);
    ads_record_builder *bld;
    assert_int_equal(ads_record_builder_new(&bld, a, NULL), 0);
    for (size_t i = 0; i < ads_record_size(r); i++) {
        ads_str n = ads_record_name(r, i);
        if (n.len == 17 && strncmp(n.p, "__SystemTimestamp", 17) == 0)
            continue;
        assert_int_equal(ads_record_builder_add(bld, n.p, n.len, ads_record_expr(r, i), NULL), 0);
    }
    ads_record_unparse(b, ads_record_builder_finish(bld));
}

char *ts_latest(ads_db *db, const char *type, const char *key)
{
    ads_txn *txn;
    ads_arena *a = ads_arena_new();
    ads_row row;
    char *out = NULL;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    if (get_row(txn, &row, type, key, a) == 1) {
        ads_buf b = ADS_BUF_INIT;
        row_text(&b, &row, a);
        out = strdup(ads_buf_cstr(&b));
        ads_buf_free(&b);
    }
    ads_txn_abort(txn);
    ads_arena_free(a);
    return out;
}

char *ts_attr(ads_db *db, const char *type, const char *key, const char *attr)
{
    ads_txn *txn;
    ads_arena *a = ads_arena_new();
    ads_row row;
    char *out;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    if (get_row(txn, &row, type, key, a) == 1) {
        ads_view view = ads_row_view(&row, NULL);
        const ads_expr *e;
        ads_value v;
        assert_int_equal(ads_expr_parse(&e, a, attr, strlen(attr), NULL), 0);
        ads_expr_eval(&v, e, &view, a);
        ads_buf b = ADS_BUF_INIT;
        ads_value_unparse(&b, &v);
        out = strdup(ads_buf_cstr(&b));
        ads_buf_free(&b);
    } else {
        out = strdup("absent");
    }
    ads_txn_abort(txn);
    ads_arena_free(a);
    return out;
}

char *ts_history(ads_db *db, const char *type, const char *key)
{
    ads_txn *txn;
    ads_arena *a = ads_arena_new();
    ads_row row, *r;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    if (get_row(txn, &row, type, key, a) == 1) {
        ads_scan *s;
        if (ads_history_open(&s, txn, &row, NULL, ADS_SCAN_DELETED, &err))
            fail_msg("history: %s", err.message);
        int rc;
        while ((rc = ads_scan_next(&r, s, &err)) == 1) {
            if (b.len)
                ads_buf_addc(&b, '\n');
            row_text(&b, r, a);
        }
        if (rc < 0)
            fail_msg("history: %s", err.message);
        ads_scan_close(s);
    }
    ads_txn_abort(txn);
    ads_arena_free(a);
    char *out = strdup(ads_buf_cstr(&b));
    ads_buf_free(&b);
    return out;
}

size_t ts_count(ads_db *db, const char *type, bool deleted)
{
    ads_txn *txn;
    const ads_type *t;
    ads_scan *s;
    ads_row *r;
    ads_error err;
    size_t n = 0;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, NULL), 0);
    if (ads_txn_type(&t, txn, type, strlen(type), &err))
        fail_msg("type: %s", err.message);
    assert_int_equal(ads_scan_open(&s, txn, t, NULL, deleted ? ADS_SCAN_DELETED : 0, &err), 0);
    int rc;
    while ((rc = ads_scan_next(&r, s, &err)) == 1)
        n++;
    if (rc < 0)
        fail_msg("scan: %s", err.message);
    ads_scan_close(s);
    ads_txn_abort(txn);
    return n;
}

static void print_problem(void *ctx, const char *p)
{
    (void)ctx;
    printf("verify: %s\n", p);
}

uint64_t ts_verify(ads_db *db)
{
    ads_verify_result res;
    ads_error err;
    if (ads_db_verify(&res, db, print_problem, NULL, &err))
        fail_msg("verify: %s", err.message);
    return res.problems;
}

void ts_collect(void *ctx, const char *problem)
{
    ts_reports *r = ctx;
    if (r->n < 8)
        snprintf(r->text[r->n], sizeof r->text[0], "%s", problem);
    r->n++;
}

size_t ts_flip_file(const char *path, const void *pat, size_t plen, size_t off,
                    unsigned char mask)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size > 0);
    unsigned char *d = malloc((size_t)size);
    assert_non_null(d);
    rewind(f);
    assert_int_equal(fread(d, 1, (size_t)size, f), (size_t)size);
    size_t n = 0;
    for (size_t i = 0; i + plen <= (size_t)size; i++) {
        if (memcmp(d + i, pat, plen) != 0)
            continue;
        d[i + off] ^= mask;
        n++;
    }
    rewind(f);
    assert_int_equal(fwrite(d, 1, (size_t)size, f), (size_t)size);
    assert_int_equal(fclose(f), 0);
    free(d);
    return n;
}

/* ---- stored rows, read as the documents lay them out ---- */

static uint64_t le_get(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void le_put(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (unsigned char)v;
}

/* A history key's sortable _Timestamp (big-endian) as the double it is. */
static double key_ts(const unsigned char *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | p[i];
    u = (u >> 63) ? u & ~(UINT64_C(1) << 63) : ~u;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

int ts_env_read(ts_env *e, const void *vp, size_t vlen, const void *kp, size_t klen)
{
    const unsigned char *v = vp, *k = kp;
    if (vlen < 6)
        return -1;
    e->version = v[4];
    e->flags = v[5];
    uint64_t bits;
    if (v[4] == 1) {
        if (vlen < 32)
            return -1;
        bits = le_get(v + 8, 8);
        memcpy(&e->ts, &bits, 8);
        e->offset = (int32_t)(uint32_t)le_get(v + 16, 4);
        e->systs = (int64_t)le_get(v + 24, 8);
        e->at = 32;
        return 0;
    }
    if (v[4] != 2)
        return -1;
    uint32_t z = 0;
    size_t at = 6;
    for (int shift = 0; at < vlen; shift += 7) {
        if (shift > 28)
            return -1; /* over five bytes: no zone */
        z |= (uint32_t)(v[at] & 0x7f) << shift;
        if (!(v[at++] & 0x80))
            break;
    }
    e->offset = (int32_t)((z >> 1) ^ (0u - (z & 1)));
    if (e->flags & 8) {
        if (klen < 16)
            return -1;
        e->ts = key_ts(k + klen - 16);
        e->systs = 0;
        for (int i = 0; i < 8; i++)
            e->systs = (int64_t)((uint64_t)e->systs << 8 | k[klen - 8 + i]);
    } else {
        if (vlen < at + 16)
            return -1;
        bits = le_get(v + at, 8);
        memcpy(&e->ts, &bits, 8);
        e->systs = (int64_t)le_get(v + at + 8, 8);
        at += 16;
    }
    e->at = at;
    return 0;
}

void ts_env_v1(ads_buf *out, const ts_env *e, const void *body, size_t len)
{
    unsigned char h[32] = {0};
    uint64_t bits;
    memcpy(&bits, &e->ts, 8);
    h[4] = 1;
    h[5] = (unsigned char)(e->flags & 7);
    le_put(h + 8, bits, 8);
    le_put(h + 16, (uint32_t)e->offset, 4);
    le_put(h + 24, (uint64_t)e->systs, 8);
    size_t start = out->len;
    ads_buf_add(out, h, sizeof h);
    ads_buf_add(out, body, len);
    assert_false(out->failed);
    unsigned char *p = (unsigned char *)out->p + start;
    le_put(p, (uint32_t)XXH3_64bits(p + 4, out->len - start - 4), 4);
}
