/*
 * tests/engine/test_chunk.c: history chunks (engine/chunk.c, docs/storage.md
 * "History chunks"), the codec alone.
 *
 * Random runs of rows (dates whole seconds, microseconds, or any double;
 * zones over all of int32; deleted rows; rows that cannot be differences)
 * read back field for field and byte for byte, whether the chunk was built
 * at once or grown a row at a time; a chunk takes no row past its row or
 * byte limit; every prefix and every flipped bit of a chunk, and of the key
 * dates it relies on, is refused; fields malformed under a sound checksum
 * are refused with what is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/arena.h"
#include "base/buf.h"
#include "classad/classad.h"
#include "classad/msgpack.h"
#include "engine/engine_int.h"

static uint64_t rng = 0x2545f4914f6cdd1du;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A run of rows of one record and its history key. */
typedef struct run {
    unsigned n;
    chunk_row rows[ADS_HISTORY_CHUNK_ROWS];
    ads_buf data[ADS_HISTORY_CHUNK_ROWS];
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    size_t klen;
    unsigned char full[600];
    size_t flen;
} run;

/* The row of a machine record at step i (one version of names, so that
 * rows are differences of each other; `big` pads it past half a chunk). */
static void machine_row(ads_buf *out, unsigned i, bool other, bool big)
{
    char text[4096];
    ads_arena *a = ads_arena_new();
    const ads_record *r;
    ads_error err;
    int n = snprintf(text, sizeof text,
                     "[Name = \"slot1@node%u\"; Memory = %u; LoadAvg = %.3f; State = \"%s\"; "
                     "OpSys = \"LINUX\"; Cpus = 8; %s",
                     7u + 0 * i, 16384u + (unsigned)(next() % 3) * 1024,
                     (double)(next() % 4000) / 1000, next() % 2 ? "Claimed" : "Unclaimed",
                     other ? "Extra = true; " : "");
    if (big) {
        n += snprintf(text + n, sizeof text - (size_t)n, "Pad = \"");
        for (int k = 0; k < 1500; k++)
            text[n++] = (char)('a' + k % 26);
        n += snprintf(text + n, sizeof text - (size_t)n, "\"; ");
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "]");
    assert_int_equal(ads_record_parse(&r, a, text, (size_t)n, &err), 0);
    ads_buf_clear(out);
    assert_int_equal(ads_msgpack_encode_record(out, r, &err), 0);
    ads_arena_free(a);
}

static double random_ts(double prev, bool first)
{
    switch (next() % 5) {
    case 0:
        return floor(prev) + 1 + (double)(next() % 100);
    case 1:
        return prev + (double)(next() % 100000000) / 1e6;
    case 2: {
        /* any double after prev */
        double d = nextafter(prev, INFINITY);
        for (unsigned k = next() % 4; k > 0; k--)
            d = nextafter(d, INFINITY);
        return d;
    }
    case 3:
        return first ? -0.0 : prev + 1e-9 * (double)(1 + next() % 1000);
    default:
        return prev + 60;
    }
}

static void key_dates(unsigned char *out, double ts, int64_t systs)
{
    ads_key__sortable_double(out, ts);
    for (int i = 0; i < 8; i++)
        out[8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
}

/* A random run of n rows; a long key when long_key. */
static void random_run(run *r, unsigned n, bool long_key, bool big)
{
    ads_buf kb = ADS_BUF_INIT;
    ads_error err;
    ads_key__typeid(&kb, 16);
    char name[500];
    size_t nl = long_key ? 450 : 1 + next() % 20;
    for (size_t i = 0; i < nl; i++)
        name[i] = (char)('a' + next() % 26);
    ads_value v = ads_string(name, nl);
    assert_int_equal(ads_key__value(&kb, &v, "Name", &err), 0);
    r->flen = 0;
    if (kb.len > ADS_KEY_INLINE_MAX) {
        memcpy(r->full, kb.p, kb.len);
        r->flen = kb.len;
        r->klen = ads_key__stored(r->key, r->full, r->flen, 0);
    } else {
        memcpy(r->key, kb.p, kb.len);
        r->klen = kb.len;
    }
    ads_buf_free(&kb);
    r->n = n;
    double ts = next() % 3 ? 1700000000.0 : -5.5;
    int64_t systs = (int64_t)(next() % 4 ? 1700000000000000ull : next());
    for (unsigned i = 0; i < n; i++) {
        chunk_row *row = &r->rows[i];
        ts = i == 0 && next() % 8 == 0 ? -0.0 : random_ts(ts, i == 0);
        if (i > 0 && ts == r->rows[i - 1].ts)
            systs += 1 + (int64_t)(next() % 5);
        else
            systs += (int64_t)(next() % 3) - 1;
        row->ts = ts;
        row->systs = systs;
        row->offset = next() % 3 ? 0 : (int32_t)(uint32_t)next();
        row->flags = next() % 5 == 0 ? ROW_DELETED : 0;
        r->data[i] = (ads_buf)ADS_BUF_INIT;
        machine_row(&r->data[i], i, i > 0 && next() % 6 == 0, big);
        row->data = (const unsigned char *)r->data[i].p;
        row->len = r->data[i].len;
        /* keys strictly increase: a row at the same date as the last takes
         * a later systs */
        if (i > 0) {
            unsigned char a[16], b[16];
            key_dates(a, r->rows[i - 1].ts, r->rows[i - 1].systs);
            key_dates(b, row->ts, row->systs);
            if (memcmp(b, a, 16) <= 0) {
                row->ts = r->rows[i - 1].ts;
                row->systs = r->rows[i - 1].systs + 1;
            }
        }
    }
    key_dates(r->key + r->klen, r->rows[0].ts, r->rows[0].systs);
    r->klen += 16;
}

static void free_run(run *r)
{
    for (unsigned i = 0; i < r->n; i++)
        ads_buf_free(&r->data[i]);
}

/* c holds exactly r's rows. */
static void check_rows(const ads_chunk *c, const run *r)
{
    ads_buf out = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(c->n, r->n);
    assert_int_equal(c->full_key_len, r->flen);
    if (r->flen)
        assert_memory_equal(c->full_key, r->full, r->flen);
    for (unsigned i = 0; i < r->n; i++) {
        const chunk_row *a = &c->rows[i], *b = &r->rows[i];
        assert_int_equal(a->flags & ROW_DELETED, b->flags & ROW_DELETED);
        assert_memory_equal(&a->ts, &b->ts, 8);
        assert_int_equal(a->systs, b->systs);
        assert_int_equal(a->offset, b->offset);
        const unsigned char *d;
        size_t len;
        assert_int_equal(ads_chunk__row(c, i, &out, &d, &len, "t", &err), 0);
        assert_int_equal(len, b->len);
        assert_memory_equal(d, b->data, len);
    }
    ads_buf_free(&out);
}

static void build_run(ads_buf *out, const run *r, unsigned n)
{
    ads_buf scratch = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_chunk__build(out, r->key, r->klen, r->flen ? r->full : NULL, r->flen,
                                      r->rows, n, &scratch, &err),
                     0);
    ads_buf_free(&scratch);
}

static void chunk__rows_read_back_built_at_once_or_grown(void **state)
{
    (void)state;
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT, scratch = ADS_BUF_INIT;
    ads_error err;
    unsigned deltas = 0;
    for (int iter = 0; iter < 400; iter++) {
        run r;
        random_run(&r, 1 + (unsigned)(next() % ADS_HISTORY_CHUNK_ROWS), iter % 7 == 0, false);
        build_run(&a, &r, r.n);
        ads_chunk c;
        assert_int_equal(
            ads_chunk__parse(&c, r.key, r.klen, (unsigned char *)a.p, a.len, "t", &err), 0);
        check_rows(&c, &r);
        for (unsigned i = 1; i < c.n; i++)
            deltas += (c.rows[i].flags & ROW_DELTA) != 0;
        /* grown a row at a time: the same bytes while it fits */
        build_run(&b, &r, 1);
        unsigned n = 1;
        for (; n < r.n; n++) {
            ads_chunk g;
            ads_buf grown = ADS_BUF_INIT;
            assert_int_equal(ads_chunk__parse(&g, r.key, r.klen, (unsigned char *)b.p, b.len,
                                              "t", &err),
                             0);
            int rc = ads_chunk__append(&grown, &g, (unsigned char *)b.p, b.len, r.key, r.klen,
                                       &r.rows[n], ADS_HISTORY_CHUNK_ROWS, &scratch, &err);
            assert_true(rc == 0 || rc == 1);
            if (rc == 1) {
                ads_buf_free(&b);
                b = grown;
            } else {
                assert_true(grown.len > ads_chunk__limit(g.row0_bytes));
                ads_buf_free(&grown);
                break;
            }
        }
        ads_buf prefix = ADS_BUF_INIT;
        build_run(&prefix, &r, n);
        assert_int_equal(b.len, prefix.len);
        assert_memory_equal(b.p, prefix.p, b.len);
        ads_buf_free(&prefix);
        free_run(&r);
    }
    assert_true(deltas > 1000);
    ads_buf_free(&a);
    ads_buf_free(&b);
    ads_buf_free(&scratch);
}

static void chunk__a_cut_keeps_the_rows_after_it_and_takes_appends(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT, cutb = ADS_BUF_INIT, again = ADS_BUF_INIT, grown = ADS_BUF_INIT,
            scratch = ADS_BUF_INIT;
    ads_error err;
    for (int iter = 0; iter < 200; iter++) {
        run r;
        random_run(&r, 2 + (unsigned)(next() % (ADS_HISTORY_CHUNK_ROWS - 2)), iter % 5 == 0,
                   false);
        build_run(&b, &r, r.n - 1);
        ads_chunk c;
        assert_int_equal(
            ads_chunk__parse(&c, r.key, r.klen, (unsigned char *)b.p, b.len, "t", &err), 0);
        unsigned from = 1 + (unsigned)(next() % (c.n > 1 ? c.n - 1 : 1));
        if (from >= c.n) {
            free_run(&r);
            continue;
        }
        /* the rows from `from` on, under row from's key */
        run tail = r;
        tail.n = r.n - 1 - from;
        memmove(tail.rows, r.rows + from, tail.n * sizeof *tail.rows);
        tail.klen = r.klen - 16;
        key_dates(tail.key + tail.klen, tail.rows[0].ts, tail.rows[0].systs);
        tail.klen += 16;
        assert_int_equal(ads_chunk__cut(&cutb, &c, (unsigned char *)b.p, b.len, from, tail.key,
                                        tail.klen, &err),
                         0);
        ads_chunk t;
        assert_int_equal(ads_chunk__parse(&t, tail.key, tail.klen, (unsigned char *)cutb.p,
                                          cutb.len, "t", &err),
                         0);
        assert_true(t.has_base);
        check_rows(&t, &tail);
        /* cut again (a chunk with a base keeps it), and append the run's
         * last row to the first cut */
        if (t.n > 1) {
            run tail2 = tail;
            tail2.n = tail.n - 1;
            memmove(tail2.rows, tail.rows + 1, tail2.n * sizeof *tail2.rows);
            key_dates(tail2.key + tail2.klen - 16, tail2.rows[0].ts, tail2.rows[0].systs);
            assert_int_equal(ads_chunk__cut(&again, &t, (unsigned char *)cutb.p, cutb.len, 1,
                                            tail2.key, tail2.klen, &err),
                             0);
            ads_chunk t2;
            assert_int_equal(ads_chunk__parse(&t2, tail2.key, tail2.klen,
                                              (unsigned char *)again.p, again.len, "t", &err),
                             0);
            check_rows(&t2, &tail2);
            assert_int_equal(t2.base_len, t.base_len);
        }
        assert_int_equal(ads_chunk__parse(&t, tail.key, tail.klen, (unsigned char *)cutb.p,
                                          cutb.len, "t", &err),
                         0);
        int rc = ads_chunk__append(&grown, &t, (unsigned char *)cutb.p, cutb.len, tail.key,
                                   tail.klen, &r.rows[r.n - 1], ADS_HISTORY_CHUNK_ROWS, &scratch,
                                   &err);
        assert_true(rc == 0 || rc == 1);
        if (rc == 1) {
            tail.rows[tail.n] = r.rows[r.n - 1];
            tail.n++;
            assert_int_equal(ads_chunk__parse(&t, tail.key, tail.klen, (unsigned char *)grown.p,
                                              grown.len, "t", &err),
                             0);
            check_rows(&t, &tail);
        }
        free_run(&r);
    }
    ads_buf_free(&b);
    ads_buf_free(&cutb);
    ads_buf_free(&again);
    ads_buf_free(&grown);
    ads_buf_free(&scratch);
}

static void chunk__takes_no_row_past_its_limits(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT, grown = ADS_BUF_INIT, scratch = ADS_BUF_INIT;
    ads_error err;
    /* small rows: ADS_HISTORY_CHUNK_ROWS of them, or the byte limit */
    run r;
    random_run(&r, ADS_HISTORY_CHUNK_ROWS, false, false);
    build_run(&b, &r, ADS_HISTORY_CHUNK_ROWS);
    assert_true(b.len <= ADS_HISTORY_CHUNK_BYTES);
    ads_chunk c;
    assert_int_equal(ads_chunk__parse(&c, r.key, r.klen, (unsigned char *)b.p, b.len, "t", &err),
                     0);
    assert_int_equal(ads_chunk__append(&grown, &c, (unsigned char *)b.p, b.len, r.key, r.klen,
                                       &r.rows[ADS_HISTORY_CHUNK_ROWS - 1], ADS_HISTORY_CHUNK_ROWS,
                                       &scratch, &err),
                     0);
    free_run(&r);
    /* big rows (over half the in-page limit): overflow pages filled */
    assert_int_equal(ads_chunk__limit(100), ADS_HISTORY_CHUNK_BYTES);
    assert_int_equal(ads_chunk__limit(ADS_HISTORY_CHUNK_BYTES / 2), ADS_HISTORY_CHUNK_BYTES);
    assert_int_equal(ads_chunk__limit(ADS_HISTORY_CHUNK_BYTES / 2 + 1), ADS_HISTORY_CHUNK_PAGE);
    assert_int_equal(ads_chunk__limit(ADS_HISTORY_CHUNK_PAGE), 2 * ADS_HISTORY_CHUNK_PAGE);
    random_run(&r, ADS_HISTORY_CHUNK_ROWS, false, true);
    build_run(&b, &r, 1);
    unsigned n = 1;
    for (; n < r.n; n++) {
        assert_int_equal(
            ads_chunk__parse(&c, r.key, r.klen, (unsigned char *)b.p, b.len, "t", &err), 0);
        int rc = ads_chunk__append(&grown, &c, (unsigned char *)b.p, b.len, r.key, r.klen,
                                   &r.rows[n], ADS_HISTORY_CHUNK_ROWS, &scratch, &err);
        if (rc == 0)
            break;
        ads_buf t = b;
        b = grown;
        grown = t;
    }
    assert_true(c.row0_bytes > ADS_HISTORY_CHUNK_BYTES / 2);
    assert_true(n > 2);
    assert_true(b.len <= ads_chunk__limit(c.row0_bytes));
    free_run(&r);
    ads_buf_free(&b);
    ads_buf_free(&grown);
    ads_buf_free(&scratch);
}

static void chunk__every_prefix_and_flipped_bit_is_refused(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    ads_error err;
    run r;
    random_run(&r, 5, false, false);
    build_run(&b, &r, r.n);
    unsigned char *p = (unsigned char *)b.p;
    ads_chunk c;
    for (size_t len = 0; len < b.len; len++)
        assert_int_equal(ads_chunk__parse(&c, r.key, r.klen, p, len, "t", &err), ADS_ECORRUPT);
    for (size_t i = 0; i < b.len * 8; i++) {
        p[i / 8] ^= (unsigned char)(1u << i % 8);
        assert_int_equal(ads_chunk__parse(&c, r.key, r.klen, p, b.len, "t", &err), ADS_ECORRUPT);
        p[i / 8] ^= (unsigned char)(1u << i % 8);
    }
    for (size_t i = (r.klen - 16) * 8; i < r.klen * 8; i++) {
        r.key[i / 8] ^= (unsigned char)(1u << i % 8);
        assert_int_equal(ads_chunk__parse(&c, r.key, r.klen, p, b.len, "t", &err), ADS_ECORRUPT);
        r.key[i / 8] ^= (unsigned char)(1u << i % 8);
    }
    assert_int_equal(ads_chunk__parse(&c, r.key, r.klen, p, b.len, "t", &err), 0);
    free_run(&r);
    ads_buf_free(&b);
}

/* Parse v (edited) after sealing it again: the message says what. */
static void refused_sealed(const run *r, unsigned char *v, size_t len, const char *what)
{
    uint32_t s = (uint32_t)XXH3_64bits_withSeed(r->key + r->klen - 16, 16,
                                                 XXH3_64bits(v + 4, len - 4));
    for (int i = 0; i < 4; i++)
        v[i] = (unsigned char)(s >> (8 * i));
    ads_chunk c;
    ads_error err;
    if (ads_chunk__parse(&c, r->key, r->klen, v, len, "history of M", &err) != ADS_ECORRUPT)
        fail_msg("not refused: wanted %s", what);
    if (!strstr(err.message, what) || !strstr(err.message, "history of M"))
        fail_msg("%s: wanted %s", err.message, what);
}

static void chunk__malformed_fields_under_a_sound_checksum_are_refused(void **state)
{
    (void)state;
    ads_buf b = ADS_BUF_INIT;
    run r = {0};
    do {
        free_run(&r);
        random_run(&r, 3, false, false);
    } while (r.rows[0].ts != r.rows[0].ts || signbit(r.rows[0].ts));
    build_run(&b, &r, r.n);
    unsigned char v[4096];
    size_t len = b.len;
    memcpy(v, b.p, len);
    v[4] = 2;
    refused_sealed(&r, v, len, "envelope version");
    memcpy(v, b.p, len);
    v[5] = 0x40;
    refused_sealed(&r, v, len, "unknown flags");
    memcpy(v, b.p, len);
    v[6] = 0;
    refused_sealed(&r, v, len, "count of rows");
    v[6] = ADS_HISTORY_CHUNK_ROWS + 1;
    refused_sealed(&r, v, len, "count of rows");
    v[6] = 2;
    refused_sealed(&r, v, len, "after its last row");
    v[6] = 4;
    refused_sealed(&r, v, len, "cut short");
    memcpy(v, b.p, len);
    v[7] = ROW_DELTA; /* row 0 a difference */
    refused_sealed(&r, v, len, "unknown flags");
    memcpy(v, b.p, len);
    v[len] = 0;
    refused_sealed(&r, v, len + 1, "after its last row");
    /* row 1 at row 0's dates: out of order */
    chunk_row rows[2] = {r.rows[0], r.rows[0]};
    ads_buf scratch = ADS_BUF_INIT;
    ads_error err;
    assert_int_equal(ads_chunk__build(&b, r.key, r.klen, NULL, 0, rows, 2, &scratch, &err), 0);
    memcpy(v, b.p, b.len);
    refused_sealed(&r, v, b.len, "out of order");
    /* a chunk whose row 0 is not at its key's dates (-0.0 is kept raw) */
    rows[0].ts = -0.0;
    assert_int_equal(ads_chunk__build(&b, r.key, r.klen, NULL, 0, rows, 1, &scratch, &err), 0);
    memcpy(v, b.p, b.len);
    refused_sealed(&r, v, b.len, "out of order");
    ads_buf_free(&scratch);
    free_run(&r);
    ads_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunk__rows_read_back_built_at_once_or_grown),
        cmocka_unit_test(chunk__a_cut_keeps_the_rows_after_it_and_takes_appends),
        cmocka_unit_test(chunk__takes_no_row_past_its_limits),
        cmocka_unit_test(chunk__every_prefix_and_flipped_bit_is_refused),
        cmocka_unit_test(chunk__malformed_fields_under_a_sound_checksum_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
