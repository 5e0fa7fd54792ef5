/*
 * engine/dump.c: writing a dump (shared/spec/tools.md, "Dump and restore";
 * the format byte by byte is in docs/formats.md, "Dump format").
 *
 * A dump is everything needed to rebuild the store exactly, in one read
 * transaction (a consistent snapshot, taken while writers go on):
 *   1. a header: format name, version, store format, node (no creation time:
 *      two dumps of the same store are byte-identical);
 *   2. every meta entry (generator and sequence state, type ids, record
 *      counts, application metadata), raw, in key order;
 *   3. every row of every record, record by record in key order, each
 *      record's history oldest first and its latest row last;
 *   4. a trailer: the numbers of meta entries and rows, and an XXH3-64 of
 *      every byte before the trailer.
 * In MessagePack (the default) items are MessagePack objects and rows are the
 * store's own bytes with their attribute ids turned back into names (a dump
 * is read without the store's name table; restore gives them ids again), so
 * a restore puts them back without decoding values and a second dump of the
 * restored store is byte-identical. In text, items are new
 * ClassAd syntax records, one per line. Reading a dump is engine/dump_read.c,
 * rebuilding a store from one engine/restore.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classad/formats.h"
#include "engine/dump_int.h"

/* ---- writing: a buffered stream that hashes what it writes ---- */

typedef struct wout {
    FILE *f;
    ads_buf b;
    XXH3_state_t *h;
    bool hashing;
    size_t hashed; /* bytes of b already in h (hashed a buffer at a time, not per piece) */
    uint64_t bytes;
    int err; /* errno of a failed write */
    bool nomem; /* an append failed (ads_buf_clear forgets b.failed) */
    /* a row with names and its rewrite on the way, kept from row to row:
     * two buffers grown anew per row were a quarter of a dump's work */
    ads_buf row, scratch;
    /* history rows kept as differences, made whole */
    ads_hist_walk hw;
    ads_buf whole;
} wout;

/* The bytes added since the last call, into the running checksum. */
static void out_hash(wout *o)
{
    if (o->hashing && !o->b.failed && o->b.len > o->hashed)
        XXH3_64bits_update(o->h, o->b.p + o->hashed, o->b.len - o->hashed);
    o->hashed = o->b.len;
}

static void out_flush(wout *o)
{
    out_hash(o);
    o->hashed = 0;
    if (o->b.failed)
        o->nomem = true;
    if (o->b.len && !o->err) {
        if (fwrite(o->b.p, 1, o->b.len, o->f) != o->b.len)
            o->err = errno ? errno : EIO;
    }
    ads_buf_clear(&o->b);
}

static void out_add(wout *o, const void *p, size_t n)
{
    o->bytes += n;
    ads_buf_add(&o->b, p, n);
    if (o->b.len > (1u << 20))
        out_flush(o);
}

static int pk_write(void *data, const char *p, size_t n)
{
    out_add(data, p, n);
    return 0;
}

/* ---- the filters ---- */

typedef struct filt {
    uint32_t *only, *skip;
    size_t nonly, nskip;
} filt;

static bool keep_type(const filt *f, uint32_t id)
{
    for (size_t i = 0; i < f->nskip; i++)
        if (f->skip[i] == id)
            return false;
    if (!f->nonly)
        return true;
    if (id <= 3) /* Type, Attribute, Sequence records always come along */
        return true;
    for (size_t i = 0; i < f->nonly; i++)
        if (f->only[i] == id)
            return true;
    return false;
}

static int type_ids(ads_txn *txn, const char *const *names, size_t n, uint32_t **out,
                    ads_error *err)
{
    *out = NULL;
    if (!n)
        return 0;
    uint32_t *ids = malloc(n * sizeof *ids);
    if (!ids)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const ads_type *t;
        int rc = ads_types__by_name(&t, txn, names[i], strlen(names[i]), err);
        if (rc) {
            free(ids);
            return rc;
        }
        ids[i] = t->id;
    }
    *out = ids;
    return 0;
}

/* Does a meta key belong to an excluded type (its record counts)? */
static bool keep_meta(const filt *f, const MDB_val *k)
{
    size_t pl = strlen(ADS_META_COUNT_PREFIX);
    if (k->mv_size == pl + 4 && memcmp(k->mv_data, ADS_META_COUNT_PREFIX, pl) == 0)
        return keep_type(f, ads_key__get_typeid((const unsigned char *)k->mv_data + pl));
    return true;
}

/* ---- text items ---- */

static void text_blob_or_string(ads_buf *b, const unsigned char *p, size_t n)
{
    bool printable = n > 0;
    for (size_t i = 0; i < n && printable; i++)
        printable = p[i] >= 0x20 && p[i] < 0x7f;
    ads_value v;
    if (printable) {
        v = ads_string((const char *)p, n);
        ads_value_unparse(b, &v);
        return;
    }
    ads_blob bl = {{(const char *)p, n}, NULL};
    v.type = ADS_BLOB;
    v.u.blob = &bl;
    ads_value_unparse(b, &v);
}

static int text_row(wout *o, ads_txn *txn, const MDB_val *k, const MDB_val *v, bool latest,
                    ads_arena *a, ads_error *err)
{
    row_env env;
    int rc = ads_row__parse(&env, k->mv_data, k->mv_size, v->mv_data, v->mv_size, "row", err);
    if (rc)
        return rc;
    const ads_type *t;
    if ((rc = ads_types__by_id(&t, txn, ads_key__get_typeid(k->mv_data), err)))
        return rc;
    ads_row row;
    size_t kl = latest ? k->mv_size : k->mv_size - 16;
    ads_row__fill(&row, txn, t, k->mv_data, kl, &env, latest, a);
    const ads_record *r;
    if ((rc = ads_row_record(&r, &row, ADS_ROW_TIMELINE, a, err)))
        return rc;
    ads_buf line = ADS_BUF_INIT;
    ads_record_unparse(&line, r);
    ads_buf_addc(&line, '\n');
    if (line.failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
    else
        out_add(o, line.p, line.len);
    ads_buf_free(&line);
    return rc;
}

/* ---- checking rows (the checks themselves: dump_check.c) ---- */

/* Check a row before it goes into the dump: 0 to write it, 1 to leave it
 * out (salvage), or ADS_ECORRUPT naming its type and key. */
static int dump_check(ads_txn *txn, const MDB_val *k, const MDB_val *v, bool latest,
                      bool made, row_env *env, const ads_dump_options *opt,
                      ads_dump_result *res, ads_arena *a, ads_error *err)
{
    char why[ADS_ERROR_MESSAGE_MAX];
    if (!(made ? ads_dump__check_made(txn, k->mv_data, k->mv_size, env, a, why, sizeof why)
               : ads_dump__check_row(txn, k->mv_data, k->mv_size, v->mv_data, v->mv_size,
                                     latest, env, a, why, sizeof why)))
        return 0;
    if (!opt->salvage)
        return ads_error_set(err, ADS_ECORRUPT, "%s", why);
    res->skipped++;
    if (opt->bad_row)
        opt->bad_row(opt->ctx, why);
    return 1;
}

/* ---- dump ---- */

static int put_item(wout *o, msgpack_packer *pk, int kind, const MDB_val *k, const MDB_val *v)
{
    msgpack_pack_array(pk, 3);
    msgpack_pack_int(pk, kind);
    msgpack_pack_bin(pk, k->mv_size);
    msgpack_pack_bin_body(pk, k->mv_data, k->mv_size);
    msgpack_pack_bin(pk, v->mv_size);
    msgpack_pack_bin_body(pk, v->mv_data, v->mv_size);
    (void)o;
    return 0;
}

/* A history row as a dump holds it: whole. A row kept as a difference is
 * made whole from its keyframe. The row, parsed, goes to *env (*made set:
 * its envelope is checked, its MessagePack is not yet), or, when bytes are
 * wanted (the text form reads the row again), a difference made whole goes
 * into o->whole and *v, its checksum made anew. 0, 1 to leave it out
 * (salvage: it cannot be made whole), or an error. A row that does not
 * parse is left as it is, for dump_check to name. */
static int whole_history(wout *o, ads_txn *txn, const MDB_val *k, MDB_val *v, row_env *out,
                         bool *made, bool bytes, const ads_dump_options *opt,
                         ads_dump_result *res, ads_arena *a, ads_error *err)
{
    row_env env;
    if (k->mv_size <= 16 ||
        ads_row__parse(&env, k->mv_data, k->mv_size, v->mv_data, v->mv_size, "", NULL))
        return 0;
    bool delta = (env.flags & ROW_DELTA) != 0;
    ads_error e;
    char name[400];
    if (ads_hist__walk(&o->hw, txn, k->mv_data, k->mv_size, &env, false, "history row", &e)) {
        if (!opt->salvage || e.code != ADS_ECORRUPT)
            return ads_error_set(err, e.code, "%s", e.message);
        ads_dump__row_name(name, sizeof name, txn, k->mv_data, k->mv_size - 16, a);
        char why[sizeof name + ADS_ERROR_MESSAGE_MAX + 2];
        snprintf(why, sizeof why, "%s: %s", name, e.message);
        res->skipped++;
        if (opt->bad_row)
            opt->bad_row(opt->ctx, why);
        return 1;
    }
    if (!bytes && k->mv_size >= 5 + 16) { /* a key dump_check would take */
        *out = env;
        *made = true;
        return 0;
    }
    if (!delta)
        return 0;
    ads_buf_clear(&o->whole);
    ads_row__build(&o->whole, k->mv_data, k->mv_size, env.flags, env.ts, env.offset, env.systs,
                   env.full_key, env.full_key_len, env.data, env.len);
    if (o->whole.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    v->mv_data = o->whole.p;
    v->mv_size = o->whole.len;
    return 0;
}

/* One row: left out by the filters, checked (a key too short to name a type
 * is a bad row, not one of another type), then written. */
static int dump_row(wout *o, msgpack_packer *pk, ads_txn *txn, const filt *fl, const MDB_val *k,
                    const MDB_val *v, bool latest, const ads_dump_options *opt,
                    ads_dump_result *res, ads_arena *a, ads_error *err)
{
    if (k->mv_size >= 4 && !keep_type(fl, ads_key__get_typeid(k->mv_data)))
        return 0;
    ads_arena_reset(a);
    MDB_val wv = *v;
    row_env env;
    bool made = false; /* env: the history row parsed, whole (its bytes maybe not in wv) */
    int rc = latest ? 0
                    : whole_history(o, txn, k, &wv, &env, &made, opt->format == ADS_DUMP_TEXT,
                                    opt, res, a, err);
    if (rc)
        return rc < 0 ? rc : 0;
    v = &wv;
    rc = dump_check(txn, k, v, latest, made, &env, opt, res, a, err);
    if (rc)
        return rc < 0 ? rc : 0;
    if (opt->format == ADS_DUMP_TEXT) {
        if ((rc = text_row(o, txn, k, v, latest, a, err)))
            return rc;
    } else {
        /* the dump names attributes (it is read without the store's name
         * table): the row with names, its checksum made anew */
        ads_buf_clear(&o->row);
        if ((rc = ads_row__to_names(&o->row, &o->scratch, txn, k->mv_data, k->mv_size, &env,
                                    err)))
            return rc;
        MDB_val nv = {o->row.len, o->row.p};
        put_item(o, pk, latest ? ITEM_LATEST : ITEM_HISTORY, k, &nv);
    }
    res->rows++;
    return 0;
}

/* A chunk's row (under the history cursor h): as dump_row, from the row
 * the cursor makes whole. */
static int dump_chunk_row(wout *o, msgpack_packer *pk, ads_txn *txn, const filt *fl,
                          ads_hrows *h, const ads_dump_options *opt, ads_dump_result *res,
                          ads_arena *a, ads_error *err)
{
    const MDB_val *k = &h->k;
    if (!keep_type(fl, ads_key__get_typeid(k->mv_data)))
        return 0;
    ads_arena_reset(a);
    row_env env;
    ads_error e;
    int rc = ads_hrows__row(h, &env, "history row", &e);
    if (rc) {
        if (!opt->salvage || e.code != ADS_ECORRUPT)
            return ads_error_set(err, e.code, "%s", e.message);
        char name[400], why[sizeof name + ADS_ERROR_MESSAGE_MAX + 2];
        ads_dump__row_name(name, sizeof name, txn, k->mv_data, k->mv_size - 16, a);
        snprintf(why, sizeof why, "%s: %s", name, e.message);
        res->skipped++;
        if (opt->bad_row)
            opt->bad_row(opt->ctx, why);
        return 0;
    }
    if (opt->format == ADS_DUMP_TEXT) {
        /* the text form reads the row from its bytes */
        ads_buf_clear(&o->whole);
        ads_row__build(&o->whole, k->mv_data, k->mv_size, env.flags, env.ts, env.offset,
                       env.systs, env.full_key, env.full_key_len, env.data, env.len);
        if (o->whole.failed)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        MDB_val v = {o->whole.len, o->whole.p};
        return dump_row(o, pk, txn, fl, k, &v, false, opt, res, a, err);
    }
    if ((rc = dump_check(txn, k, NULL, false, true, &env, opt, res, a, err)))
        return rc < 0 ? rc : 0;
    ads_buf_clear(&o->row);
    if ((rc = ads_row__to_names(&o->row, &o->scratch, txn, k->mv_data, k->mv_size, &env, err)))
        return rc;
    MDB_val nv = {o->row.len, o->row.p};
    put_item(o, pk, ITEM_HISTORY, k, &nv);
    res->rows++;
    return 0;
}

/* The history cursor's row: a one-row entry's as stored, a chunk's from
 * the cursor. */
static int dump_history_row(wout *o, msgpack_packer *pk, ads_txn *txn, const filt *fl,
                            ads_hrows *h, const ads_dump_options *opt, ads_dump_result *res,
                            ads_arena *a, ads_error *err)
{
    if (h->chunk)
        return dump_chunk_row(o, pk, txn, fl, h, opt, res, a, err);
    return dump_row(o, pk, txn, fl, &h->k, &h->ev, false, opt, res, a, err);
}

/* The history cursor on its first (first) or next row: 1, 0 at the end, or
 * an error. In salvage, a chunk that does not read is reported and passed
 * over, and rows out of order are reported and read on. */
static int hist_step(ads_hrows *h, bool first, ads_txn *txn, const ads_dump_options *opt,
                     ads_dump_result *res, ads_arena *a, ads_error *err)
{
    ads_error e;
    int rc = first ? ads_hrows__first(h, &e) : ads_hrows__next(h, &e);
    while (rc < 0) {
        if (!opt->salvage || e.code != ADS_ECORRUPT || !h->valid)
            return ads_error_set(err, e.code, "%s", e.message);
        char name[400], why[sizeof name + ADS_ERROR_MESSAGE_MAX + 2];
        size_t rl = h->ek.mv_size > 16 ? h->ek.mv_size - 16 : 0;
        ads_dump__row_name(name, sizeof name, txn, h->ek.mv_data, rl, a);
        snprintf(why, sizeof why, "%s: %s", name, e.message);
        res->skipped++;
        if (opt->bad_row)
            opt->bad_row(opt->ctx, why);
        rc = h->bad ? ads_hrows__next_entry(h, &e) : 1;
    }
    return rc;
}

int ads_db_dump(ads_db *db, FILE *f, const ads_dump_options *opt, ads_dump_result *res,
                ads_error *err)
{
    if (!db || !f)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_dump_options none = {ADS_DUMP_MSGPACK, NULL, 0, NULL, 0, NULL, NULL, false, NULL};
    if (!opt)
        opt = &none;
    ads_dump_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    bool text = opt->format == ADS_DUMP_TEXT;
    wout o = {.f = f, .h = XXH3_createState(), .hashing = true};
    ads_txn *txn = NULL;
    ads_arena *a = ads_arena_new();
    filt fl = {NULL, NULL, 0, 0};
    MDB_cursor *mc = NULL, *lc = NULL;
    ads_hrows hr;
    ads_hrows__init(&hr);
    int rc;
    if (!o.h || !a) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    XXH3_64bits_reset(o.h);
    if ((rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err)) ||
        (rc = type_ids(txn, opt->types, opt->ntypes, &fl.only, err)) ||
        (rc = type_ids(txn, opt->exclude, opt->nexclude, &fl.skip, err)))
        goto cleanup;
    fl.nonly = opt->ntypes;
    fl.nskip = opt->nexclude;
    msgpack_packer pk;
    msgpack_packer_init(&pk, &o, pk_write);
    MDB_stat ls, hs;
    mdb_stat(txn->txn, db->latest, &ls);
    mdb_stat(txn->txn, db->history, &hs);
    uint64_t total = ls.ms_entries + hs.ms_entries;

    /* header */
    if (text) {
        ads_buf h = ADS_BUF_INIT;
        ads_buf_printf(&h, "[ Format = \"%s\"; Version = %d; StoreFormat = %d; Node = \"%012llx\" ]\n",
                       DUMP_FORMAT, DUMP_VERSION, ADS_DB_FORMAT_VERSION,
                       (unsigned long long)db->node);
        o.nomem |= h.failed;
        out_add(&o, h.p, h.len);
        ads_buf_free(&h);
    } else {
        msgpack_pack_map(&pk, 4);
        msgpack_pack_str_with_body(&pk, "format", 6);
        msgpack_pack_str_with_body(&pk, DUMP_FORMAT, strlen(DUMP_FORMAT));
        msgpack_pack_str_with_body(&pk, "version", 7);
        msgpack_pack_int(&pk, DUMP_VERSION);
        msgpack_pack_str_with_body(&pk, "store_format", 12);
        msgpack_pack_int(&pk, ADS_DB_FORMAT_VERSION);
        msgpack_pack_str_with_body(&pk, "node", 4);
        msgpack_pack_uint64(&pk, db->node);
    }

    /* meta */
    MDB_val k, v;
    if ((rc = mdb_cursor_open(txn->txn, db->meta, &mc))) {
        rc = ads_db__lmdb(txn, err, rc, "dumping");
        goto cleanup;
    }
    int mrc;
    for (mrc = mdb_cursor_get(mc, &k, &v, MDB_FIRST); mrc == 0;
         mrc = mdb_cursor_get(mc, &k, &v, MDB_NEXT)) {
        if (!keep_meta(&fl, &k))
            continue;
        if (text) {
            ads_buf line = ADS_BUF_INIT;
            ads_buf_adds(&line, "[ Meta = ");
            text_blob_or_string(&line, k.mv_data, k.mv_size);
            ads_buf_adds(&line, "; Value = ");
            ads_blob bl = {{v.mv_data, v.mv_size}, NULL};
            ads_value bv;
            bv.type = ADS_BLOB;
            bv.u.blob = &bl;
            ads_value_unparse(&line, &bv);
            ads_buf_adds(&line, " ]\n");
            o.nomem |= line.failed;
            out_add(&o, line.p, line.len);
            ads_buf_free(&line);
        } else {
            put_item(&o, &pk, ITEM_META, &k, &v);
        }
        res->meta++;
    }
    if (mrc != MDB_NOTFOUND) {
        rc = ads_db__lmdb(txn, err, mrc, "dumping");
        goto cleanup;
    }

    /* rows: record by record, history first */
    if ((rc = mdb_cursor_open(txn->txn, db->latest, &lc))) {
        rc = ads_db__lmdb(txn, err, rc, "dumping");
        goto cleanup;
    }
    if ((rc = ads_hrows__open(&hr, txn, err)))
        goto cleanup;
    uint64_t dropped_at = 0;
    int hrc = hist_step(&hr, true, txn, opt, res, a, err);
    if (hrc < 0) {
        rc = hrc;
        goto cleanup;
    }
    int lrc;
    for (lrc = mdb_cursor_get(lc, &k, &v, MDB_FIRST);; lrc = mdb_cursor_get(lc, &k, &v, MDB_NEXT)) {
        bool have_latest = lrc == 0;
        if (lrc && lrc != MDB_NOTFOUND) {
            rc = ads_db__lmdb(txn, err, lrc, "dumping");
            goto cleanup;
        }
        /* history rows of records up to and including this one */
        while (hrc == 1) {
            const MDB_val *hk = &hr.k;
            size_t rl = hk->mv_size >= 16 ? hk->mv_size - 16 : 0;
            if (have_latest) {
                size_t m = rl < k.mv_size ? rl : k.mv_size;
                int c = memcmp(hk->mv_data, k.mv_data, m);
                if (c > 0 || (c == 0 && rl > k.mv_size))
                    break; /* a later record's */
            }
            if ((rc = dump_history_row(&o, &pk, txn, &fl, &hr, opt, res, a, err)))
                goto cleanup;
            hrc = hist_step(&hr, false, txn, opt, res, a, err);
        }
        if (hrc < 0) {
            rc = hrc;
            goto cleanup;
        }
        if (!have_latest)
            break;
        if ((rc = dump_row(&o, &pk, txn, &fl, &k, &v, true, opt, res, a, err)))
            goto cleanup;
        if (o.bytes - dropped_at >= (2u << 20)) {
            ads_db__drop_map_pages(db);
            dropped_at = o.bytes;
        }
        if (opt->progress && (res->rows & 8191) == 0)
            opt->progress(opt->ctx, res->rows, total);
        if (o.err)
            break;
    }

    /* trailer */
    out_hash(&o);
    uint64_t sum = XXH3_64bits_digest(o.h);
    o.hashing = false;
    if (text) {
        ads_buf t = ADS_BUF_INIT;
        ads_buf_printf(&t, "[ End = true; Meta = %llu; Rows = %llu; Checksum = \"%016llx\" ]\n",
                       (unsigned long long)res->meta, (unsigned long long)res->rows,
                       (unsigned long long)sum);
        o.nomem |= t.failed;
        out_add(&o, t.p, t.len);
        ads_buf_free(&t);
    } else {
        msgpack_pack_map(&pk, 4);
        msgpack_pack_str_with_body(&pk, "end", 3);
        msgpack_pack_true(&pk);
        msgpack_pack_str_with_body(&pk, "meta", 4);
        msgpack_pack_uint64(&pk, res->meta);
        msgpack_pack_str_with_body(&pk, "rows", 4);
        msgpack_pack_uint64(&pk, res->rows);
        msgpack_pack_str_with_body(&pk, "checksum", 8);
        msgpack_pack_uint64(&pk, sum);
    }
    out_flush(&o);
    if (!o.err && fflush(f))
        o.err = errno ? errno : EIO;
    if (o.err) {
        rc = ads_error_set(err, ADS_EIO, "writing the dump: %s", strerror(o.err));
        goto cleanup;
    }
    if (o.nomem || o.b.failed) {
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (opt->progress)
        opt->progress(opt->ctx, res->rows, res->rows);
    res->bytes = o.bytes;
    rc = 0;
cleanup:
    if (mc)
        mdb_cursor_close(mc);
    if (lc)
        mdb_cursor_close(lc);
    ads_hrows__close(&hr);
    ads_txn_abort(txn);
    free(fl.only);
    free(fl.skip);
    ads_buf_free(&o.b);
    ads_buf_free(&o.row);
    ads_buf_free(&o.scratch);
    ads_hist__walk_free(&o.hw);
    ads_buf_free(&o.whole);
    XXH3_freeState(o.h);
    ads_arena_free(a);
    return rc;
}
