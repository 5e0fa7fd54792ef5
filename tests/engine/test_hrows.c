/*
 * tests/engine/test_hrows.c: the cursor over history rows (engine/hrows.c)
 * against a model, on a history table holding both forms of entry: one row
 * (stores before format 7) and chunks of rows (engine/chunk.c).
 *
 * Random histories of several records (short keys, and one whose key is a
 * long one) are written straight into the table, each record's rows cut at
 * random into one-row entries and chunks. Walking forward and backward gives
 * every row of the model in order with its key, dates and data; seeking
 * every key of the model, keys between them, and keys of no row (a record's
 * key alone, past its last date, between records) lands on the row the
 * model says, strict or not, and the row before; and the walk goes on from
 * there. A chunk whose rows run past the next entry is found corrupt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/arena.h"
#include "base/buf.h"
#include "classad/classad.h"
#include "classad/msgpack.h"
#include "engine/engine_int.h"
#include "tests/engine/helpers.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define MAXROWS 3000

/* A row of the model. */
typedef struct mrow {
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    size_t klen;
    double ts;
    int64_t systs;
    unsigned flags;
    ads_buf data;
} mrow;

static mrow model[MAXROWS];
static size_t nmodel;
static unsigned char fulls[8][600]; /* long keys' whole forms */
static size_t flens[8];

static int key_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = memcmp(a, b, n);
    return c ? c : alen < blen ? -1 : alen > blen;
}

static void row_data(ads_buf *out, unsigned rec, unsigned i)
{
    char text[512];
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    ads_error err;
    int n = snprintf(text, sizeof text,
                     "[Name = \"r%u\"; Step = %u; State = \"%s\"; Memory = 2048; Arch = \"X86\"]",
                     rec, i, next() % 2 ? "Busy" : "Idle");
    assert_int_equal(ads_record_parse(&r, a, text, (size_t)n, &err), 0);
    ads_buf_clear(out);
    assert_int_equal(ads_msgpack_encode_record(out, r, &err), 0);
    ads_arena_free(a);
}

static void set_dates(unsigned char *p, double ts, int64_t systs)
{
    ads_key__sortable_double(p, ts);
    for (int i = 0; i < 8; i++)
        p[8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
}

/* The rows of nrec records, their keys in order (record r's key sorts by r;
 * record 3 a long one). */
static void make_model(unsigned nrec)
{
    nmodel = 0;
    for (unsigned rec = 0; rec < nrec; rec++) {
        ads_buf kb = ADS_BUF_INIT;
        ads_error err;
        ads_key__typeid(&kb, 16);
        char name[500];
        size_t nl = rec == 3 ? 440 : 3;
        memset(name, 'a', nl);
        name[0] = (char)('a' + rec);
        ads_value v = ads_string(name, nl);
        assert_int_equal(ads_key__value(&kb, &v, "Name", &err), 0);
        unsigned char skey[ADS_KEY_INLINE_MAX];
        size_t slen;
        flens[rec] = 0;
        if (kb.len > ADS_KEY_INLINE_MAX) {
            memcpy(fulls[rec], kb.p, kb.len);
            flens[rec] = kb.len;
            slen = ads_key__stored(skey, fulls[rec], kb.len, 0);
        } else {
            memcpy(skey, kb.p, kb.len);
            slen = kb.len;
        }
        ads_buf_free(&kb);
        unsigned rows = 1 + (unsigned)(next() % 200);
        double ts = 1700000000.0;
        int64_t systs = 1700000000000000;
        for (unsigned i = 0; i < rows && nmodel < MAXROWS; i++) {
            mrow *m = &model[nmodel++];
            if (next() % 4)
                ts += (double)(1 + next() % 120);
            systs += 1 + (int64_t)(next() % 1000);
            m->ts = ts;
            m->systs = systs;
            m->flags = next() % 9 == 0 ? ROW_DELETED : 0;
            memcpy(m->key, skey, slen);
            set_dates(m->key + slen, ts, systs);
            m->klen = slen + 16;
            m->data = (ads_buf)ADS_BUF_INIT;
            row_data(&m->data, rec, i);
        }
    }
}

/* Write the model's rows into db's history, cut into entries at random:
 * one-row entries (max_chunk 1), or chunks of up to max_chunk rows. */
static void write_model(ads_db *db, unsigned max_chunk)
{
    ads_txn *txn;
    ads_error err;
    ads_buf val = ADS_BUF_INIT, scratch = ADS_BUF_INIT;
    assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
    size_t i = 0;
    while (i < nmodel) {
        /* the rows of one entry: of one record */
        size_t slen = model[i].klen - 16;
        size_t n = 1 + (size_t)(next() % max_chunk);
        size_t j = i + 1;
        while (j < nmodel && j - i < n && model[j].klen == model[i].klen &&
               memcmp(model[j].key, model[i].key, slen) == 0)
            j++;
        const unsigned char *full = NULL;
        size_t flen = 0;
        for (unsigned r = 0; r < 8; r++)
            if (flens[r] && ads_key__check_stored(model[i].key, model[i].klen, fulls[r], flens[r],
                                                  model[i].ts, model[i].systs) == 0) {
                full = fulls[r];
                flen = flens[r];
            }
        if (j - i == 1 && next() % 2) {
            ads_buf_clear(&val);
            ads_row__build(&val, model[i].key, model[i].klen, model[i].flags | ROW_KEYDATES,
                           model[i].ts, 0, model[i].systs, full, flen,
                           (const unsigned char *)model[i].data.p, model[i].data.len);
        } else {
            chunk_row rows[ADS_HISTORY_CHUNK_ROWS];
            for (size_t k = i; k < j; k++)
                rows[k - i] = (chunk_row){model[k].flags, model[k].ts, 0, model[k].systs,
                                          (const unsigned char *)model[k].data.p,
                                          model[k].data.len};
            assert_int_equal(ads_chunk__build(&val, model[i].key, model[i].klen, full, flen, rows,
                                              (unsigned)(j - i), &scratch, &err),
                             0);
        }
        MDB_val k = {model[i].klen, model[i].key}, v = {val.len, val.p};
        assert_int_equal(mdb_put(txn->txn, txn->db->history, &k, &v, 0), 0);
        i = j;
    }
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    ads_buf_free(&val);
    ads_buf_free(&scratch);
}

static void free_model(void)
{
    for (size_t i = 0; i < nmodel; i++)
        ads_buf_free(&model[i].data);
}

/* The cursor is on model row i. */
static void on_row(ads_hrows *h, size_t i)
{
    const mrow *m = &model[i];
    ads_error err;
    assert_int_equal(h->k.mv_size, m->klen);
    assert_memory_equal(h->k.mv_data, m->key, m->klen);
    row_env env;
    if (ads_hrows__row(h, &env, "history", &err))
        fail_msg("row %zu: %s", i, err.message);
    assert_int_equal(env.ts, m->ts);
    assert_int_equal(env.systs, m->systs);
    assert_int_equal(env.flags & ROW_DELETED, m->flags);
    assert_int_equal(env.len, m->data.len);
    assert_memory_equal(env.data, m->data.p, env.len);
}

/* The first model row whose key is >= (strict: >) key: nmodel when none. */
static size_t model_seek(const unsigned char *key, size_t len, bool strict)
{
    size_t lo = 0, hi = nmodel;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = key_cmp(model[mid].key, model[mid].klen, key, len);
        if (strict ? c > 0 : c >= 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void walk_both_ways(ads_db *db)
{
    ads_txn *txn;
    ads_error err;
    ads_hrows h;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err), 0);
    assert_int_equal(ads_hrows__open(&h, txn, &err), 0);
    size_t i = 0;
    for (int rc = ads_hrows__first(&h, &err); rc != 0; rc = ads_hrows__next(&h, &err)) {
        if (rc < 0)
            fail_msg("row %zu: %s", i, err.message);
        assert_true(i < nmodel);
        on_row(&h, i++);
    }
    assert_int_equal(i, nmodel);
    for (int rc = ads_hrows__last(&h, &err); rc != 0; rc = ads_hrows__prev(&h, &err)) {
        assert_true(rc == 1 && i > 0);
        on_row(&h, --i);
    }
    assert_int_equal(i, 0);
    ads_hrows__close(&h);
    ads_txn_abort(txn);
}

/* Seek key (strict or not) and the row before it, and walk on a few rows. */
static void probe(ads_hrows *h, const unsigned char *key, size_t len)
{
    ads_error err;
    for (int strict = 0; strict < 2; strict++) {
        size_t want = model_seek(key, len, strict);
        int rc = ads_hrows__seek(h, key, len, strict, &err);
        assert_int_equal(rc, want < nmodel);
        for (size_t i = want; rc == 1 && i < want + 3; i++) {
            on_row(h, i);
            rc = ads_hrows__next(h, &err);
            assert_int_equal(rc, i + 1 < nmodel);
        }
    }
    size_t at = model_seek(key, len, false);
    int rc = ads_hrows__before(h, key, len, &err);
    assert_int_equal(rc, at > 0);
    for (size_t i = at; rc == 1 && i > 0 && i + 3 > at; i--) {
        on_row(h, i - 1);
        rc = ads_hrows__prev(h, &err);
        assert_int_equal(rc, i - 1 > 0);
    }
}

static void probe_all(ads_db *db)
{
    ads_txn *txn;
    ads_error err;
    ads_hrows h;
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err), 0);
    assert_int_equal(ads_hrows__open(&h, txn, &err), 0);
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    for (size_t i = 0; i < nmodel; i++) {
        const mrow *m = &model[i];
        size_t slen = m->klen - 16;
        probe(&h, m->key, m->klen);
        /* a date just after and just before this row's */
        memcpy(key, m->key, m->klen);
        key[m->klen - 1]++;
        probe(&h, key, m->klen);
        set_dates(key + slen, m->ts, m->systs - 1);
        probe(&h, key, m->klen);
        set_dates(key + slen, m->ts + 0.5, 0);
        probe(&h, key, m->klen);
        if (i % 17 == 0) {
            /* the record's key alone, and past its every date */
            probe(&h, m->key, slen);
            memset(key + slen, 0xff, 16);
            probe(&h, key, m->klen);
            /* a key between records */
            key[slen - 1]++;
            probe(&h, key, slen);
            probe(&h, m->key, 3);
        }
    }
    ads_hrows__close(&h);
    ads_txn_abort(txn);
}

static void hrows__walks_and_seeks_as_the_model_says(void **state)
{
    (void)state;
    unsigned max_chunks[] = {1, 2, 5, ADS_HISTORY_CHUNK_ROWS};
    for (size_t c = 0; c < sizeof max_chunks / sizeof *max_chunks; c++) {
        tstore t;
        ads_db *db = ts_open(&t, 1700000000.0);
        make_model(6);
        write_model(db, max_chunks[c]);
        walk_both_ways(db);
        probe_all(db);
        free_model();
        ts_close(&t);
    }
}

static void hrows__a_chunk_running_past_the_next_entry_is_corrupt(void **state)
{
    (void)state;
    tstore t;
    ads_db *db = ts_open(&t, 1700000000.0);
    make_model(1);
    while (nmodel < 3) {
        free_model();
        make_model(1);
    }
    /* a chunk of rows 0..2 and, under row 1's key, a one-row entry */
    ads_txn *txn;
    ads_error err;
    ads_buf val = ADS_BUF_INIT, scratch = ADS_BUF_INIT;
    assert_int_equal(ads_txn_begin(&txn, db, 0, &err), 0);
    chunk_row rows[3];
    for (int k = 0; k < 3; k++)
        rows[k] = (chunk_row){0, model[k].ts, 0, model[k].systs,
                              (const unsigned char *)model[k].data.p, model[k].data.len};
    assert_int_equal(
        ads_chunk__build(&val, model[0].key, model[0].klen, NULL, 0, rows, 3, &scratch, &err), 0);
    MDB_val k = {model[0].klen, model[0].key}, v = {val.len, val.p};
    assert_int_equal(mdb_put(txn->txn, txn->db->history, &k, &v, 0), 0);
    ads_buf_clear(&val);
    ads_row__build(&val, model[1].key, model[1].klen, ROW_KEYDATES, model[1].ts, 0,
                   model[1].systs, NULL, 0, (const unsigned char *)model[1].data.p,
                   model[1].data.len);
    k = (MDB_val){model[1].klen, model[1].key};
    v = (MDB_val){val.len, val.p};
    assert_int_equal(mdb_put(txn->txn, txn->db->history, &k, &v, 0), 0);
    assert_int_equal(ads_txn_commit(txn, &err), 0);
    assert_int_equal(ads_txn_begin(&txn, db, ADS_TXN_READONLY, &err), 0);
    ads_hrows h;
    assert_int_equal(ads_hrows__open(&h, txn, &err), 0);
    int rc = ads_hrows__first(&h, &err);
    while (rc == 1)
        rc = ads_hrows__next(&h, &err);
    assert_int_equal(rc, ADS_ECORRUPT);
    assert_non_null(strstr(err.message, "past the entry after it"));
    rc = ads_hrows__last(&h, &err);
    while (rc == 1)
        rc = ads_hrows__prev(&h, &err);
    assert_int_equal(rc, ADS_ECORRUPT);
    ads_hrows__close(&h);
    ads_txn_abort(txn);
    ads_buf_free(&val);
    ads_buf_free(&scratch);
    free_model();
    ts_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hrows__walks_and_seeks_as_the_model_says),
        cmocka_unit_test(hrows__a_chunk_running_past_the_next_entry_is_corrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
