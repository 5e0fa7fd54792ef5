/*
 * engine/dump.c: dump, restore and backup (shared/spec/tools.md, "Dump and
 * restore"; the format byte by byte is in docs/formats.md, "Dump format").
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
 * store's own bytes, so a restore puts them back without decoding and a
 * second dump of the restored store is byte-identical. In text, items are new ClassAd syntax records, one per line.
 *
 * Restore builds the store in a new directory beside the target and renames
 * it into place only when the trailer's counts and checksum match, so a
 * truncated, corrupt or unknown dump leaves the target as it was. Memory stays
 * flat: rows go to disk in batches, the stream is read in chunks.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "classad/formats.h"
#include "engine/engine_int.h"

#define DUMP_FORMAT "adstore-dump"
#define DUMP_VERSION 1
enum { ITEM_META = 0, ITEM_LATEST = 1, ITEM_HISTORY = 2 };

/* ---- writing: a buffered stream that hashes what it writes ---- */

typedef struct wout {
    FILE *f;
    ads_buf b;
    XXH3_state_t *h;
    bool hashing;
    uint64_t bytes;
    int err; /* errno of a failed write */
} wout;

static void out_flush(wout *o)
{
    if (o->b.len && !o->err) {
        if (fwrite(o->b.p, 1, o->b.len, o->f) != o->b.len)
            o->err = errno ? errno : EIO;
    }
    ads_buf_clear(&o->b);
}

static void out_add(wout *o, const void *p, size_t n)
{
    if (o->hashing)
        XXH3_64bits_update(o->h, p, n);
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
    ads_row__fill(&row, t, k->mv_data, kl, &env, latest, a);
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

int ads_db_dump(ads_db *db, FILE *f, const ads_dump_options *opt, ads_dump_result *res,
                ads_error *err)
{
    if (!db || !f)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_dump_options none = {ADS_DUMP_MSGPACK, NULL, 0, NULL, 0, NULL, NULL};
    if (!opt)
        opt = &none;
    ads_dump_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    bool text = opt->format == ADS_DUMP_TEXT;
    wout o = {f, ADS_BUF_INIT, XXH3_createState(), true, 0, 0};
    ads_txn *txn = NULL;
    ads_arena *a = ads_arena_new();
    filt fl = {NULL, NULL, 0, 0};
    MDB_cursor *mc = NULL, *lc = NULL, *hc = NULL;
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
    if ((rc = mdb_cursor_open(txn->txn, db->latest, &lc)) ||
        (rc = mdb_cursor_open(txn->txn, db->history, &hc))) {
        rc = ads_db__lmdb(txn, err, rc, "dumping");
        goto cleanup;
    }
    MDB_val hk, hv;
    uint64_t dropped_at = 0;
    int hrc = mdb_cursor_get(hc, &hk, &hv, MDB_FIRST);
    int lrc;
    for (lrc = mdb_cursor_get(lc, &k, &v, MDB_FIRST);; lrc = mdb_cursor_get(lc, &k, &v, MDB_NEXT)) {
        bool have_latest = lrc == 0;
        if (lrc && lrc != MDB_NOTFOUND) {
            rc = ads_db__lmdb(txn, err, lrc, "dumping");
            goto cleanup;
        }
        /* history rows of records up to and including this one */
        while (hrc == 0) {
            size_t rl = hk.mv_size >= 16 ? hk.mv_size - 16 : 0;
            if (have_latest) {
                size_t m = rl < k.mv_size ? rl : k.mv_size;
                int c = memcmp(hk.mv_data, k.mv_data, m);
                if (c > 0 || (c == 0 && rl > k.mv_size))
                    break; /* a later record's */
            }
            if (hk.mv_size >= 4 && keep_type(&fl, ads_key__get_typeid(hk.mv_data))) {
                ads_arena_reset(a);
                if (text && (rc = text_row(&o, txn, &hk, &hv, false, a, err)))
                    goto cleanup;
                if (!text)
                    put_item(&o, &pk, ITEM_HISTORY, &hk, &hv);
                res->rows++;
            }
            hrc = mdb_cursor_get(hc, &hk, &hv, MDB_NEXT);
        }
        if (hrc && hrc != MDB_NOTFOUND) {
            rc = ads_db__lmdb(txn, err, hrc, "dumping");
            goto cleanup;
        }
        if (!have_latest)
            break;
        if (k.mv_size >= 4 && keep_type(&fl, ads_key__get_typeid(k.mv_data))) {
            ads_arena_reset(a);
            if (text && (rc = text_row(&o, txn, &k, &v, true, a, err)))
                goto cleanup;
            if (!text)
                put_item(&o, &pk, ITEM_LATEST, &k, &v);
            res->rows++;
        }
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
    uint64_t sum = XXH3_64bits_digest(o.h);
    o.hashing = false;
    if (text) {
        ads_buf t = ADS_BUF_INIT;
        ads_buf_printf(&t, "[ End = true; Meta = %llu; Rows = %llu; Checksum = \"%016llx\" ]\n",
                       (unsigned long long)res->meta, (unsigned long long)res->rows,
                       (unsigned long long)sum);
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
    if (o.b.failed) {
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
    if (hc)
        mdb_cursor_close(hc);
    ads_txn_abort(txn);
    free(fl.only);
    free(fl.skip);
    ads_buf_free(&o.b);
    XXH3_freeState(o.h);
    ads_arena_free(a);
    return rc;
}

/* ---- reading a dump: items of either format ---- */

typedef struct item {
    int kind; /* -1 header, ITEM_*, 99 trailer */
    const unsigned char *key, *val;
    size_t klen, vlen;
    const ads_record *rec; /* text rows: the record with its timeline attributes */
    uint64_t tmeta, trows, tsum;
    uint64_t node;
} item;

struct ads_dump_reader {
    FILE *f;
    bool text;
    bool started, ended;
    bool res_ready;  /* res is initialised */
    char *buf;       /* msgpack: the stream's bytes [bpos, blen) not yet parsed */
    size_t bpos, blen, bcap;
    msgpack_unpacked res;
    XXH3_state_t *h;
    uint64_t meta, rows, bytes;
    /* text */
    char *line;
    size_t cap;
    size_t linelen; /* the line's bytes without its '\n' (NUL bytes may be among them) */
    long lineno;
    ads_arena *a;          /* items of restore */
    ads_arena *rec_arena;  /* records of ads_dump_reader_next: its caller's arena */
    uint64_t node;
};

static int corrupt(ads_error *err, const char *what)
{
    return ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: %s", what);
}

static int reader_init(ads_dump_reader *r, FILE *f, ads_error *err)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->h = XXH3_createState();
    r->a = ads_arena_new();
    if (!r->h || !r->a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    XXH3_64bits_reset(r->h);
    int c = fgetc(f);
    if (c == EOF)
        return ads_error_set(err, ADS_ECORRUPT, "the dump is empty");
    ungetc(c, f);
    r->text = c == '[';
    if (!r->text) {
        msgpack_unpacked_init(&r->res);
        r->res_ready = true;
    }
    return 0;
}

static void reader_fini(ads_dump_reader *r)
{
    if (r->res_ready)
        msgpack_unpacked_destroy(&r->res);
    free(r->buf);
    free(r->line);
    XXH3_freeState(r->h);
    ads_arena_free(r->a);
}

static bool key_is(const msgpack_object *o, const char *s)
{
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
           memcmp(o->via.str.ptr, s, n) == 0;
}

/* The next MessagePack object and its exact bytes (for the checksum). The
 * object points into r->buf, valid until the next call. An object cut by
 * the end of the buffer is parsed again from its start once more bytes are
 * in. */
#define DUMP_OBJECT_MAX ((size_t)1 << 30)

/*
 * Whether the bytes so far of an object can be a dump's: a map or an array
 * of at most 15 members (fixmap, fixarray) that are scalars, strings or
 * bins, or a scalar (refused later). msgpack-c allocates a container's
 * members from the count in its header before it has them, so a few corrupt
 * bytes could ask for gigabytes; such objects are refused before it sees
 * them. False only when they cannot be; too few bytes to tell is true.
 */
static bool dump_shape(const unsigned char *p, size_t n)
{
    size_t items;
    if ((p[0] & 0xf0) == 0x80)
        items = 2 * (size_t)(p[0] & 0x0f);
    else if ((p[0] & 0xf0) == 0x90)
        items = p[0] & 0x0f;
    else
        return p[0] < 0xdc || p[0] > 0xdf; /* array16/32, map16/32: never */
    for (size_t at = 1, i = 0; i < items && at < n; i++) {
        unsigned char c = p[at];
        size_t len, w;
        if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
            len = 1;
        else if (c >= 0xa0 && c <= 0xbf)
            len = 1 + (size_t)(c & 0x1f);
        else if ((c >= 0x80 && c <= 0x9f) || (c >= 0xdc && c <= 0xdf))
            return false; /* a container inside: never in a dump */
        else if (c >= 0xca && c <= 0xd8) {
            static const unsigned char fixed[] = {5, 9, 2, 3, 5, 9, 2, 3, 5, 9, 3, 4, 6, 10, 18};
            len = fixed[c - 0xca];
        } else {
            /* bin, str and ext: a length of w bytes after the type byte
             * (and, for ext, a type byte after the length) */
            switch (c) {
            case 0xc4: case 0xd9: case 0xc7: w = 1; break;
            case 0xc5: case 0xda: case 0xc8: w = 2; break;
            case 0xc6: case 0xdb: case 0xc9: w = 4; break;
            default: return true; /* 0xc1: msgpack-c refuses it */
            }
            size_t head = 1 + w + (c >= 0xc7 && c <= 0xc9);
            if (n - at < head)
                return true;
            len = 0;
            for (size_t k = 0; k < w; k++)
                len = len << 8 | p[at + 1 + k];
            len += head;
        }
        at += len;
    }
    return true;
}

static int next_object(ads_dump_reader *r, const char **bytes, size_t *size, ads_error *err)
{
    for (;;) {
        if (r->bpos < r->blen) {
            if (!dump_shape((const unsigned char *)r->buf + r->bpos, r->blen - r->bpos))
                return corrupt(err, "an item that is not a small map or array of plain values");
            size_t off = r->bpos;
            msgpack_unpack_return ur = msgpack_unpack_next(&r->res, r->buf, r->blen, &off);
            if (ur == MSGPACK_UNPACK_SUCCESS || ur == MSGPACK_UNPACK_EXTRA_BYTES) {
                *bytes = r->buf + r->bpos;
                *size = off - r->bpos;
                r->bytes += *size;
                r->bpos = off;
                return 1;
            }
            if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            if (ur != MSGPACK_UNPACK_CONTINUE)
                return corrupt(err, "a MessagePack object does not parse");
        }
        /* more bytes: keep the unparsed tail, grow when it fills the buffer */
        if (r->bpos > 0) {
            memmove(r->buf, r->buf + r->bpos, r->blen - r->bpos);
            r->blen -= r->bpos;
            r->bpos = 0;
        }
        if (r->bcap - r->blen < (1u << 19)) {
            size_t cap = r->bcap ? 2 * r->bcap : (size_t)1 << 20;
            if (cap > DUMP_OBJECT_MAX)
                return corrupt(err, "an item of more than 1 GiB");
            char *m = realloc(r->buf, cap);
            if (!m)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            r->buf = m;
            r->bcap = cap;
        }
        size_t n = fread(r->buf + r->blen, 1, r->bcap - r->blen, r->f);
        if (n == 0) {
            if (ferror(r->f))
                return ads_error_set(err, ADS_EIO, "reading the dump: %s", strerror(errno));
            if (r->blen > r->bpos)
                return corrupt(err, "it ends in the middle of an item (truncated)");
            return 0;
        }
        r->blen += n;
    }
}

static int read_item_msgpack(ads_dump_reader *r, item *it, ads_error *err)
{
    const char *bytes;
    size_t size;
    int rc = next_object(r, &bytes, &size, err);
    if (rc <= 0)
        return rc ? rc : corrupt(err, "it ends before its trailer (truncated)");
    const msgpack_object *o = &r->res.data;
    if (!r->started) {
        /* the header */
        if (o->type != MSGPACK_OBJECT_MAP)
            return corrupt(err, "it does not start with a header");
        bool fmt = false;
        int64_t version = -1;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
            if (key_is(k, "format"))
                fmt = key_is(v, DUMP_FORMAT);
            else if (key_is(k, "version") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                version = (int64_t)v->via.u64;
            else if (key_is(k, "node") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->node = v->via.u64;
        }
        if (!fmt)
            return ads_error_set(err, ADS_ECORRUPT, "this is not an adstore dump");
        if (version != DUMP_VERSION)
            return ads_error_set(err, ADS_EVERSION,
                                 "the dump is of format version %lld; this build reads version %d",
                                 (long long)version, DUMP_VERSION);
        r->started = true;
        r->node = it->node;
        XXH3_64bits_update(r->h, bytes, size);
        it->kind = -1;
        return 1;
    }
    if (o->type == MSGPACK_OBJECT_MAP) {
        /* the trailer */
        it->kind = 99;
        bool end = false;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
            if (key_is(k, "end"))
                end = v->type == MSGPACK_OBJECT_BOOLEAN && v->via.boolean;
            else if (key_is(k, "meta") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->tmeta = v->via.u64;
            else if (key_is(k, "rows") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->trows = v->via.u64;
            else if (key_is(k, "checksum") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->tsum = v->via.u64;
        }
        if (!end)
            return corrupt(err, "a map where a row belongs");
        return 1;
    }
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3 ||
        o->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
        o->via.array.ptr[0].via.u64 > 2 || o->via.array.ptr[1].type != MSGPACK_OBJECT_BIN ||
        o->via.array.ptr[2].type != MSGPACK_OBJECT_BIN)
        return corrupt(err, "an item that is not [kind, key, value]");
    XXH3_64bits_update(r->h, bytes, size);
    it->kind = (int)o->via.array.ptr[0].via.u64;
    it->key = (const unsigned char *)o->via.array.ptr[1].via.bin.ptr;
    it->klen = o->via.array.ptr[1].via.bin.size;
    it->val = (const unsigned char *)o->via.array.ptr[2].via.bin.ptr;
    it->vlen = o->via.array.ptr[2].via.bin.size;
    if (it->klen == 0 || it->klen > ADS_KEY_INLINE_MAX + 16 ||
        (it->kind == ITEM_HISTORY && it->klen < 21) || (it->kind == ITEM_LATEST && it->klen < 5))
        return corrupt(err, "a key of an impossible size");
    return 1;
}

/* Text: each line a record. */
static int read_item_text(ads_dump_reader *r, item *it, ads_error *err)
{
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0) {
        if (ferror(r->f))
            return ads_error_set(err, ADS_EIO, "reading the dump: %s", strerror(errno));
        return corrupt(err, "it ends before its trailer (truncated)");
    }
    r->lineno++;
    r->bytes += (uint64_t)n;
    if (r->line[n - 1] != '\n')
        return corrupt(err, "its last line is cut short (truncated)");
    /* records for ads_dump_reader_next go straight into its caller's arena */
    ads_arena *a = r->rec_arena;
    if (!a) {
        ads_arena_reset(r->a);
        a = r->a;
    }
    const ads_record *rec;
    size_t len = (size_t)n;
    if (len && r->line[len - 1] == '\n')
        len--;
    r->linelen = len;
    if (ads_record_parse(&rec, a, r->line, len, err)) {
        char msg[ADS_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->message : "");
        return ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: line %ld: %s", r->lineno,
                             msg);
    }
    ads_value v;
    if (!r->started) {
        ads_value ver;
        if (ads_record_eval_attr(&v, rec, "Format", 6, a) || v.type != ADS_STRING ||
            v.u.s.len != strlen(DUMP_FORMAT) || memcmp(v.u.s.p, DUMP_FORMAT, v.u.s.len) != 0)
            return ads_error_set(err, ADS_ECORRUPT, "this is not an adstore dump");
        if (ads_record_eval_attr(&ver, rec, "Version", 7, a) || ver.type != ADS_INTEGER ||
            ver.u.i != DUMP_VERSION)
            return ads_error_set(err, ADS_EVERSION,
                                 "the dump is of format version %lld; this build reads version %d",
                                 ver.type == ADS_INTEGER ? (long long)ver.u.i : -1LL,
                                 DUMP_VERSION);
        if (!ads_record_eval_attr(&v, rec, "Node", 4, a) && v.type == ADS_STRING)
            it->node = strtoull(v.u.s.p, NULL, 16);
        r->started = true;
        r->node = it->node;
        XXH3_64bits_update(r->h, r->line, (size_t)n);
        it->kind = -1;
        return 1;
    }
    if (ads_record_lookup(rec, "End", 3)) {
        it->kind = 99;
        ads_value m, rows, sum;
        if (ads_record_eval_attr(&m, rec, "Meta", 4, a) ||
            ads_record_eval_attr(&rows, rec, "Rows", 4, a) ||
            ads_record_eval_attr(&sum, rec, "Checksum", 8, a) || m.type != ADS_INTEGER ||
            rows.type != ADS_INTEGER || sum.type != ADS_STRING)
            return corrupt(err, "a trailer without Meta, Rows and Checksum");
        it->tmeta = (uint64_t)m.u.i;
        it->trows = (uint64_t)rows.u.i;
        it->tsum = strtoull(sum.u.s.p, NULL, 16);
        return 1;
    }
    XXH3_64bits_update(r->h, r->line, (size_t)n);
    if (ads_record_lookup(rec, "Meta", 4) && !ads_record_lookup(rec, "AdType", 6)) {
        ads_value k, val;
        if (ads_record_eval_attr(&k, rec, "Meta", 4, a) ||
            ads_record_eval_attr(&val, rec, "Value", 5, a) || val.type != ADS_BLOB)
            return corrupt(err, "a meta line without a blob Value");
        if (k.type == ADS_STRING) {
            it->key = (const unsigned char *)k.u.s.p;
            it->klen = k.u.s.len;
        } else if (k.type == ADS_BLOB) {
            it->key = (const unsigned char *)k.u.blob->bytes.p;
            it->klen = k.u.blob->bytes.len;
        } else {
            return corrupt(err, "a meta key that is neither a string nor a blob");
        }
        it->val = (const unsigned char *)val.u.blob->bytes.p;
        it->vlen = val.u.blob->bytes.len;
        it->kind = ITEM_META;
        return 1;
    }
    if (ads_record_eval_attr(&v, rec, ads_attr__latest, 8, a) || v.type != ADS_BOOLEAN)
        return corrupt(err, "a row without __Latest");
    it->kind = v.u.b ? ITEM_LATEST : ITEM_HISTORY;
    it->rec = rec;
    return 1;
}

static int read_item(ads_dump_reader *r, item *it, ads_error *err)
{
    memset(it, 0, sizeof *it);
    if (r->ended)
        return 0;
    int rc = r->text ? read_item_text(r, it, err) : read_item_msgpack(r, it, err);
    if (rc <= 0)
        return rc;
    if (it->kind == ITEM_META)
        r->meta++;
    else if (it->kind == ITEM_LATEST || it->kind == ITEM_HISTORY)
        r->rows++;
    else if (it->kind == 99) {
        uint64_t sum = XXH3_64bits_digest(r->h);
        if (it->trows != r->rows || it->tmeta != r->meta)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "the dump is corrupt: its trailer counts %llu rows and %llu meta "
                                 "entries, but it holds %llu and %llu",
                                 (unsigned long long)it->trows, (unsigned long long)it->tmeta,
                                 (unsigned long long)r->rows, (unsigned long long)r->meta);
        if (it->tsum != sum)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "the dump is corrupt: its checksum does not match its bytes");
        r->ended = true;
        /* nothing may follow the trailer */
        int c = fgetc(r->f);
        if (!r->text && (r->bpos < r->blen || c != EOF))
            return corrupt(err, "bytes after the trailer");
        if (r->text && c != EOF)
            return corrupt(err, "lines after the trailer");
    }
    return 1;
}

/* ---- restore ---- */

/* A text row back to the store's key and value, in txn (types must be
 * restored already: Type records come first in key order). */
static int text_to_raw(ads_txn *txn, const ads_record *rec, bool latest, ads_buf *key,
                       ads_buf *val, ads_arena *a, ads_error *err)
{
    ads_value v, ts, sys, del;
    if (ads_record_eval_attr(&v, rec, "AdType", 6, a) || v.type != ADS_STRING)
        return ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: a row without AdType");
    const ads_type *t;
    int rc = ads_types__by_name(&t, txn, v.u.s.p, v.u.s.len, err);
    if (rc)
        return rc;
    if (ads_record_eval_attr(&ts, rec, ads_attr__timestamp, 10, a) || ts.type != ADS_ABSTIME ||
        ads_record_eval_attr(&sys, rec, ads_attr__systime, 17, a) || sys.type != ADS_ABSTIME ||
        ads_record_eval_attr(&del, rec, ads_attr__deleted, 8, a) || del.type != ADS_BOOLEAN)
        return ads_error_set(err, ADS_ECORRUPT,
                             "the dump is corrupt: a row without its timeline attributes");
    /* the record without the timeline attributes, as the store keeps it */
    ads_record_builder *b;
    if ((rc = ads_record_builder_new(&b, a, err)))
        return rc;
    for (size_t i = 0; i < ads_record_size(rec); i++) {
        ads_str n = ads_record_name(rec, i);
        if (ads_row__timeline_attr(n.p, n.len))
            continue;
        if ((rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(rec, i), err)))
            return rc;
    }
    const ads_record *plain = ads_record_builder_finish(b);
    ads_buf data = ADS_BUF_INIT, full = ADS_BUF_INIT;
    if ((rc = ads_msgpack_encode_record(&data, plain, err)))
        goto out;
    ads_key__typeid(&full, t->id);
    for (size_t i = 0; i < t->nkeys && !rc; i++) {
        ads_value kv;
        if (ads_record_eval_attr(&kv, plain, t->keys[i].p, t->keys[i].len, a))
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        else
            rc = ads_key__value(&full, &kv, t->keys[i].p, err);
    }
    if (rc)
        goto out;
    unsigned char skey[ADS_KEY_INLINE_MAX + 16];
    size_t slen = ads_key__stored(skey, (const unsigned char *)full.p, full.len, 0);
    int64_t systs = llround(sys.u.abs.secs * 1e6);
    if (!latest) {
        ads_key__sortable_double(skey + slen, ts.u.abs.secs);
        for (int i = 0; i < 8; i++)
            skey[slen + 8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
        slen += 16;
    }
    ads_buf_clear(key);
    ads_buf_add(key, skey, slen);
    ads_buf_clear(val);
    ads_row__build(val, skey, slen, del.u.b ? ROW_DELETED : 0, ts.u.abs.secs, ts.u.abs.offset,
                   systs, full.len > ADS_KEY_INLINE_MAX ? (const unsigned char *)full.p : NULL,
                   full.len, (const unsigned char *)data.p, data.len);
    if (key->failed || val->failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
out:
    ads_buf_free(&data);
    ads_buf_free(&full);
    return rc;
}

/* A batch of items waiting to be written (kept so a full map can be grown
 * and the batch written again). */
typedef struct batch {
    ads_buf bytes;         /* keys and values, back to back */
    size_t *off;           /* per item: key offset; value follows at off + klen */
    size_t *klen, *vlen;
    uint8_t *kind;
    bool *text;            /* a text row: bytes hold its line, re-parsed in the txn */
    size_t n, cap;
} batch;

static int batch_push(batch *b, int kind, bool text, const void *k, size_t kl, const void *v,
                      size_t vl, ads_error *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        size_t *off = realloc(b->off, cap * sizeof *off);
        if (off)
            b->off = off;
        size_t *klen = realloc(b->klen, cap * sizeof *klen);
        if (klen)
            b->klen = klen;
        size_t *vlen = realloc(b->vlen, cap * sizeof *vlen);
        if (vlen)
            b->vlen = vlen;
        uint8_t *kind_ = realloc(b->kind, cap);
        if (kind_)
            b->kind = kind_;
        bool *t = realloc(b->text, cap * sizeof *t);
        if (t)
            b->text = t;
        if (!off || !klen || !vlen || !kind_ || !t)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        b->cap = cap;
    }
    b->off[b->n] = b->bytes.len;
    b->klen[b->n] = kl;
    b->vlen[b->n] = vl;
    b->kind[b->n] = (uint8_t)kind;
    b->text[b->n] = text;
    ads_buf_add(&b->bytes, k, kl);
    ads_buf_add(&b->bytes, v, vl);
    if (b->bytes.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    b->n++;
    return 0;
}

static void batch_free(batch *b)
{
    ads_buf_free(&b->bytes);
    free(b->off);
    free(b->klen);
    free(b->vlen);
    free(b->kind);
    free(b->text);
}

typedef struct restore_run {
    batch *b;
    bool new_node;
    bool last;
} restore_run;

static int restore_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    restore_run *rr = ctx;
    batch *b = rr->b;
    ads_db *db = txn->db;
    ads_arena *a = ads_arena_new();
    ads_buf key = ADS_BUF_INIT, val = ADS_BUF_INIT;
    int rc = 0;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < b->n && !rc; i++) {
        const char *k = b->bytes.p + b->off[i], *v = k + b->klen[i];
        size_t kl = b->klen[i], vl = b->vlen[i];
        if (b->text[i]) {
            /* a text row: parse its line again and build the stored bytes */
            const ads_record *rec;
            ads_arena_reset(a);
            if ((rc = ads_record_parse(&rec, a, k, kl, err)) ||
                (rc = text_to_raw(txn, rec, b->kind[i] == ITEM_LATEST, &key, &val, a, err))) {
                /* a row the store cannot take (of a type the dump does not
                 * declare, with a key that is not one) is a corrupt dump */
                if (rc != ADS_ENOMEM && rc != ADS_ESTORAGE && rc != ADS_ECORRUPT) {
                    char msg[ADS_ERROR_MESSAGE_MAX];
                    snprintf(msg, sizeof msg, "%s", err ? err->message : "");
                    rc = ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: %s", msg);
                }
                break;
            }
            k = key.p;
            kl = key.len;
            v = val.p;
            vl = val.len;
        }
        MDB_dbi dbi = b->kind[i] == ITEM_META ? db->meta
                    : b->kind[i] == ITEM_LATEST ? db->latest : db->history;
        unsigned flags = b->kind[i] == ITEM_META ? 0 : MDB_APPEND;
        rc = ads_db__put(txn, dbi, k, kl, v, vl, flags, err);
        if (rc && !txn->broken)
            rc = ads_error_set(err, ADS_ECORRUPT,
                               "the dump is corrupt: its rows are out of key order or repeat");
    }
    if (!rc && rr->last && rr->new_node) {
        uint64_t node;
        unsigned char buf[ADS_IDGEN_STATE_BYTES];
        ads_idgen_state st;
        if (!(rc = ads_node_new(&node, err))) {
            unsigned char nb[8];
            for (int i = 0; i < 8; i++)
                nb[i] = (unsigned char)(node >> (8 * i));
            ads_idgen_state_init(&st, node);
            ads_idgen_state_encode(buf, &st);
            if (!(rc = ads_db__meta_put(txn, ADS_META_NODE, strlen(ADS_META_NODE), nb, 8, err)))
                rc = ads_db__meta_put(txn, ADS_META_IDGEN, strlen(ADS_META_IDGEN), buf,
                                      sizeof buf, err);
        }
    }
    ads_buf_free(&key);
    ads_buf_free(&val);
    ads_arena_free(a);
    return rc;
}

/* Is dir absent, an empty directory, or a store with no rows? */
static int check_target(const char *dir, bool *exists, ads_error *err)
{
    struct stat sb;
    *exists = false;
    if (stat(dir, &sb) != 0) {
        if (errno == ENOENT)
            return 0;
        return ads_error_set(err, ADS_EIO, "cannot use %s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode))
        return ads_error_set(err, ADS_EINVAL, "%s is not a directory", dir);
    *exists = true;
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    if (stat(path, &sb) == 0) {
        ads_db *db;
        if (ads_db_open(&db, dir, ADS_DB_READONLY, err))
            return ads_error_set(err, ADS_EINVAL, "%s holds something that is not an empty store",
                                 dir);
        ads_txn *txn;
        int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
        if (!rc) {
            MDB_stat a, b;
            mdb_stat(txn->txn, db->latest, &a);
            mdb_stat(txn->txn, db->history, &b);
            if (a.ms_entries + b.ms_entries)
                rc = ads_error_set(err, ADS_EEXIST,
                                   "%s holds a store with %llu rows: restore needs an empty "
                                   "store",
                                   dir, (unsigned long long)(a.ms_entries + b.ms_entries));
            ads_txn_abort(txn);
        }
        ads_db_close(db);
        return rc;
    }
    DIR *d = opendir(dir);
    if (!d)
        return ads_error_set(err, ADS_EIO, "cannot read %s: %s", dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = ads_error_set(err, ADS_EEXIST, "%s is not empty: restore needs an empty store",
                               dir);
    closedir(d);
    return rc;
}

static void remove_store_dir(const char *dir)
{
    char p[4300];
    if (snprintf(p, sizeof p, "%s/data.mdb", dir) < (int)sizeof p)
        unlink(p);
    if (snprintf(p, sizeof p, "%s/lock.mdb", dir) < (int)sizeof p)
        unlink(p);
    rmdir(dir);
}

int ads_restore(const char *dir, FILE *f, const ads_restore_options *opt, ads_dump_result *res,
                ads_error *err)
{
    if (!dir || !*dir || !f)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_restore_options none = {false, NULL, NULL};
    if (!opt)
        opt = &none;
    ads_dump_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    bool exists;
    if (strlen(dir) > 4000)
        return ads_error_set(err, ADS_EINVAL, "the store directory name is too long");
    int rc = check_target(dir, &exists, err);
    if (rc)
        return rc;
    char tmp[4200], old[4200];
    snprintf(tmp, sizeof tmp, "%s.restoring-%ld", dir, (long)getpid());
    snprintf(old, sizeof old, "%s.replaced-%ld", dir, (long)getpid());
    remove_store_dir(tmp);
    ads_dump_reader r;
    ads_db *db = NULL;
    batch b;
    memset(&b, 0, sizeof b);
    if ((rc = reader_init(&r, f, err)))
        goto fail;
    ads_db_options o = {(size_t)1 << 30};
    if ((rc = ads_db_open_ex(&db, tmp, ADS_DB_CREATE | ADS_DB_NOSYNC, &o, err)))
        goto fail;
    item it;
    restore_run rr = {&b, opt->new_node, false};
    for (;;) {
        if ((rc = read_item(&r, &it, err)) < 0)
            goto fail;
        if (rc == 0)
            break;
        if (it.kind == -1)
            continue;
        if (it.kind == 99) {
            rr.last = true;
            if ((rc = ads_db_write(db, restore_fn, &rr, err)))
                goto fail;
            break;
        }
        if (it.rec) {
            /* keep the text line: it is parsed again inside the transaction
             * (all of it: a comment may hold a NUL byte) */
            rc = batch_push(&b, it.kind, true, r.line, r.linelen, "", 0, err);
        } else {
            rc = batch_push(&b, it.kind, false, it.key, it.klen, it.val, it.vlen, err);
        }
        if (rc)
            goto fail;
        if (it.kind != ITEM_META)
            res->rows++;
        else
            res->meta++;
        if (b.n >= 20000 || b.bytes.len >= (16u << 20)) {
            if ((rc = ads_db_write(db, restore_fn, &rr, err)))
                goto fail;
            b.n = 0;
            ads_buf_clear(&b.bytes);
            pthread_rwlock_rdlock(&db->resize);
            ads_db__drop_map_pages(db);
            pthread_rwlock_unlock(&db->resize);
            if (opt->progress)
                opt->progress(opt->ctx, res->rows, 0);
        }
    }
    if (!r.ended) {
        rc = corrupt(err, "it ends before its trailer (truncated)");
        goto fail;
    }
    if ((rc = ads_db_sync(db, err)))
        goto fail;
    ads_db_close(db);
    db = NULL;
    res->bytes = r.bytes;
    /* into place: the old (empty) store aside, the new one in, the old one gone */
    if (exists && rename(dir, old) != 0) {
        rc = ads_error_set(err, ADS_EIO, "cannot move %s aside: %s", dir, strerror(errno));
        goto fail;
    }
    if (rename(tmp, dir) != 0) {
        rc = ads_error_set(err, ADS_EIO, "cannot move the restored store to %s: %s", dir,
                           strerror(errno));
        if (exists)
            rename(old, dir);
        goto fail;
    }
    if (exists)
        remove_store_dir(old);
    if (opt->progress)
        opt->progress(opt->ctx, res->rows, res->rows);
    reader_fini(&r);
    batch_free(&b);
    return 0;
fail:
    ads_db_close(db);
    remove_store_dir(tmp);
    reader_fini(&r);
    batch_free(&b);
    return rc;
}

/* ---- reading a dump's rows as records (import) ---- */

int ads_dump_reader_new(ads_dump_reader **out, FILE *f, ads_error *err)
{
    ads_dump_reader *r = calloc(1, sizeof *r);
    if (!r)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = reader_init(r, f, err);
    if (rc) {
        reader_fini(r);
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void ads_dump_reader_free(ads_dump_reader *r)
{
    if (!r)
        return;
    reader_fini(r);
    free(r);
}

int ads_dump_reader_next(ads_dump_reader *r, const ads_record **out, ads_arena *a,
                         ads_error *err)
{
    for (;;) {
        item it;
        r->rec_arena = a;
        int rc = read_item(r, &it, err);
        r->rec_arena = NULL;
        if (rc <= 0)
            return rc ? rc : 0;
        if (it.kind == 99)
            return 0;
        if (it.kind != ITEM_LATEST && it.kind != ITEM_HISTORY)
            continue;
        const ads_record *rec = it.rec;
        if (!rec) {
            row_env env;
            if ((rc = ads_row__parse(&env, it.key, it.klen, it.val, it.vlen, "row in the dump",
                                     err)))
                return rc;
            /* the record with _Timestamp and _Deleted; the store gives
             * __SystemTimestamp and __Latest anew */
            const ads_record *plain;
            if ((rc = ads_msgpack_decode_record(&plain, a, env.data, env.len, ADS_MSGPACK_COPY,
                                                err)))
                return rc;
            ads_record_builder *b;
            if ((rc = ads_record_builder_new(&b, a, err)))
                return rc;
            for (size_t i = 0; i < ads_record_size(plain) && !rc; i++) {
                ads_str n = ads_record_name(plain, i);
                rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(plain, i), err);
            }
            ads_value ts = ads_abstime(env.ts, env.offset),
                      del = ads_bool((env.flags & ROW_DELETED) != 0);
            if (rc || (rc = ads_record_builder_add_value(b, ads_attr__timestamp, 10, &ts, err)) ||
                (rc = ads_record_builder_add_value(b, ads_attr__deleted, 8, &del, err)))
                return rc;
            rec = ads_record_builder_finish(b);
        } else {
            /* a text row, parsed in the caller's arena: without the store's
             * own attributes */
            ads_record_builder *b;
            if ((rc = ads_record_builder_new(&b, a, err)))
                return rc;
            for (size_t i = 0; i < ads_record_size(it.rec) && !rc; i++) {
                ads_str n = ads_record_name(it.rec, i);
                int w = ads_row__timeline_attr(n.p, n.len);
                if (w != 2 && w != 3)
                    rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(it.rec, i), err);
            }
            if (rc)
                return rc;
            rec = ads_record_builder_finish(b);
        }
        *out = rec;
        return 1;
    }
}

/* ---- backup ---- */

int ads_db_backup(ads_db *db, const char *dir, ads_error *err)
{
    if (!db || !dir || !*dir)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    bool exists;
    int rc = check_target(dir, &exists, err);
    if (rc)
        return rc;
    if (!exists && mkdir(dir, 0700) != 0)
        return ads_error_set(err, ADS_EIO, "cannot create %s: %s", dir, strerror(errno));
    char path[4200];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    if (exists && unlink(path) != 0 && errno != ENOENT)
        return ads_error_set(err, ADS_EIO, "cannot replace %s: %s", path, strerror(errno));
    /* LMDB's compacting copy: a consistent snapshot through a read transaction,
     * free pages left out; writers go on meanwhile */
    pthread_rwlock_rdlock(&db->resize);
    rc = mdb_env_copy2(db->env, dir, MDB_CP_COMPACT);
    pthread_rwlock_unlock(&db->resize);
    if (rc) {
        unlink(path);
        return ads_error_set(err, rc == ENOSPC || rc == EIO ? ADS_EIO : ADS_ESTORAGE,
                             "copying the store: %s", mdb_strerror(rc));
    }
    if (chmod(path, 0600) != 0)
        return ads_error_set(err, ADS_EIO, "cannot set the mode of %s: %s", path,
                             strerror(errno));
    return 0;
}
