/*
 * engine/history.c: history rows kept as differences (docs/storage.md,
 * "History rows as differences").
 *
 * A record's rows differ from each other in a few attributes: a machine's
 * load and state change from minute to minute, its name, memory and
 * operating system do not. So a row that moves to history is kept as its
 * difference from a keyframe, the nearest whole row before it in the
 * record's history (ads_msgpack__delta; the difference names the keyframe
 * by that row's checksum, so a reader that finds another row there says the
 * store is corrupt rather than making a wrong row). What keeps every
 * difference's keyframe the nearest whole row before it:
 *   - a record's first history row is whole, or its keyframe is the
 *     record's base (below);
 *   - a row put at the end of the history (the latest row moving there, a
 *     backfilled row dated after every history row) is a difference from
 *     the keyframe of the row before it, or whole when the difference would
 *     be over 3/4 of the row or ADS_HISTORY_KEYFRAME_ROWS rows would then
 *     share that keyframe;
 *   - a row put before or between rows (a backfill) is a difference from
 *     the keyframe of the row before it; should it have to be whole (two
 *     row versions), the differences after it are written again from it.
 * Retention removes the rows before a record's first kept row. When that
 * row is a difference, its keyframe goes to the `bases` table under the
 * record's key instead of away (ads_hist__trim), so a trim rewrites no
 * row: the differences before the record's first whole history row take
 * their keyframe from there, and the base goes when the first kept row is
 * whole (or the record is purged).
 *
 * A reader going through a record's history in order keeps the last whole
 * row it read (ads_hist__walk); one that starts in the middle finds the
 * keyframe by walking back (ads_hist__resolve).
 */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "engine/engine_int.h"

unsigned ads_hist__keyframe_rows(void)
{
    const char *s = getenv("ADSTORE_TEST_KEYFRAME_ROWS");
    if (s && *s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (*end == '\0' && v >= 1 && v <= 255)
            return (unsigned)v;
    }
    return ADS_HISTORY_KEYFRAME_ROWS;
}

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++, v >>= 8)
        p[i] = (unsigned char)v;
}

static bool of_record(const MDB_val *k, const unsigned char *hkey, size_t slen)
{
    return k->mv_size == slen + 16 && memcmp(k->mv_data, hkey, slen) == 0;
}

static bool is_delta(const MDB_val *v)
{
    return v->mv_size > 5 && (((const unsigned char *)v->mv_data)[5] & ROW_DELTA);
}

/* keyframe_before's walk from the row before hkey, where c stands (rc:
 * LMDB's code of the step there). */
static int walk_back(MDB_cursor *c, int rc, const unsigned char *hkey, size_t slen, MDB_val *k,
                     MDB_val *v, unsigned *steps, int *found)
{
    *found = 0;
    *steps = 0;
    while (rc == 0 && of_record(k, hkey, slen)) {
        if (!is_delta(v)) {
            *found = 1;
            return 0;
        }
        ++*steps;
        rc = mdb_cursor_get(c, k, v, MDB_PREV);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* The nearest whole row of the record before hkey (slen + 16 bytes), on
 * cursor c: *found 1 with *k, *v and *steps (the differences passed on the
 * way), 0 when there is none. LMDB's return code. */
static int keyframe_before(MDB_cursor *c, const unsigned char *hkey, size_t slen, MDB_val *k,
                           MDB_val *v, unsigned *steps, int *found)
{
    k->mv_data = (void *)hkey;
    k->mv_size = slen + 16;
    return walk_back(c, ads_db__cursor_before(c, k, v), hkey, slen, k, v, steps, found);
}

/* The base of the record at skey (slen bytes): 1 with *v, 0 none. */
static int base_get(ads_txn *txn, const unsigned char *skey, size_t slen, MDB_val *v,
                    ads_error *err)
{
    MDB_val k = {slen, (void *)skey};
    int rc = txn->db->bases ? mdb_get(txn->txn, txn->db->bases, &k, v) : MDB_NOTFOUND;
    if (rc == MDB_NOTFOUND)
        return 0;
    return rc ? ads_db__lmdb(txn, err, rc, "reading history") : 1;
}

/* The keyframe of k, v: a whole history row found before hkey on c, or
 * else the record's base, parsed into *kf. 1, 0 none, or an error. */
static int parse_keyframe(ads_txn *txn, const unsigned char *hkey, size_t slen, int found,
                          const MDB_val *k, const MDB_val *v, row_env *kf, const char *where,
                          ads_error *err)
{
    MDB_val bv;
    int rc;
    if (found)
        rc = ads_row__parse_history(kf, k->mv_data, k->mv_size, v->mv_data, v->mv_size, where, err);
    else if ((rc = base_get(txn, hkey, slen, &bv, err)) <= 0)
        return rc;
    else
        rc = ads_row__parse_found(kf, hkey, slen, bv.mv_data, bv.mv_size, where, err);
    return rc ? rc : 1;
}

/* ads_hist__keyframe, and the differences passed on the way (*steps). */
static int find_keyframe(ads_txn *txn, const unsigned char *hkey, size_t slen, row_env *kf,
                         unsigned *steps, const char *where, ads_error *err)
{
    MDB_cursor *c;
    MDB_val k, v;
    int found, rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "reading history");
    rc = keyframe_before(c, hkey, slen, &k, &v, steps, &found);
    if (rc) {
        mdb_cursor_close(c);
        return ads_db__lmdb(txn, err, rc, "reading history");
    }
    rc = parse_keyframe(txn, hkey, slen, found, &k, &v, kf, where, err);
    mdb_cursor_close(c);
    return rc;
}

int ads_hist__keyframe(ads_txn *txn, const unsigned char *hkey, size_t slen, row_env *kf,
                       const char *where, ads_error *err)
{
    unsigned steps;
    return find_keyframe(txn, hkey, slen, kf, &steps, where, err);
}

int ads_hist__apply(row_env *env, uint32_t kf_sum, const unsigned char *kf, size_t kflen,
                    ads_buf *out, const char *where, ads_error *err)
{
    if (env->len < ADS_HIST_REF || get_le32(env->data) != kf_sum)
        return ads_error_set(err, ADS_ECORRUPT,
                             "%s: a history row kept as a difference does not follow its "
                             "keyframe (the store is corrupt)",
                             where);
    ads_error e;
    ads_buf_clear(out);
    int rc =
        ads_msgpack__undelta(out, env->data + ADS_HIST_REF, env->len - ADS_HIST_REF, kf, kflen, &e);
    if (rc)
        return ads_error_set(err, rc, "%s: %s", where, e.message);
    env->data = (const unsigned char *)out->p;
    env->len = out->len;
    env->flags &= ~(unsigned)ROW_DELTA;
    return 0;
}

/* A difference with no keyframe: the store is corrupt, or (a read-only
 * handle of a store that had no `bases` table when it was opened) a writer
 * has trimmed its history since. */
static int no_keyframe(ads_txn *txn, const char *where, ads_error *err)
{
    if (!txn->db->bases)
        return ads_error_set(err, ADS_ESTORAGE,
                             "%s: a history row kept as a difference has its keyframe in a "
                             "table this read-only handle did not find when it opened the "
                             "store: open the store again",
                             where);
    return ads_error_set(err, ADS_ECORRUPT,
                         "%s: a history row kept as a difference has no whole row before it "
                         "(the store is corrupt)",
                         where);
}

int ads_hist__resolve(ads_txn *txn, const unsigned char *hkey, size_t hklen, row_env *env,
                      ads_buf *out, const char *where, ads_error *err)
{
    if (!(env->flags & ROW_DELTA))
        return 0;
    row_env kf;
    unsigned steps;
    int rc = hklen > 16 ? find_keyframe(txn, hkey, hklen - 16, &kf, &steps, where, err) : 0;
    if (rc < 0)
        return rc;
    if (rc == 0)
        return no_keyframe(txn, where, err);
    return ads_hist__apply(env, kf.sum, kf.data, kf.len, out, where, err);
}

/* ---- writing ---- */

/* Build the stored value of a history row into out: whole (data is the
 * row) or a difference (data is its steps, after the keyframe's sum). */
static int build(ads_buf *out, const unsigned char *hkey, size_t slen, unsigned flags,
                 const row_env *e, const unsigned char *data, size_t len, ads_error *err)
{
    ads_buf_clear(out);
    ads_row__build(out, hkey, slen + 16, flags, e->ts, e->offset, e->systs, e->full_key,
                   e->full_key_len, data, len);
    if (out->failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    return 0;
}

/* The rows after the row at hkey that were differences from keyframe f (its
 * row fdata, flen; its checksum fsum), made whole: the row at hkey, now the
 * nearest whole row before them, was put whole because it could not be a
 * difference from f (the two are of two row versions, names and ids), and
 * neither can they be from it (a difference is of its keyframe's version). */
static int whole_after(ads_txn *txn, const unsigned char *hkey, size_t slen,
                       const unsigned char *fdata, size_t flen, uint32_t fsum, ads_error *err)
{
    unsigned char at[ADS_KEY_INLINE_MAX + 16];
    ads_buf whole = ADS_BUF_INIT, val = ADS_BUF_INIT;
    int rc = 0;
    memcpy(at, hkey, slen + 16);
    for (;;) {
        /* the next row: sought again after each put, which may move pages */
        MDB_cursor *c;
        MDB_val k = {slen + 16, at}, v;
        int mrc = mdb_cursor_open(txn->txn, txn->db->history, &c);
        if (mrc) {
            rc = ads_db__lmdb(txn, err, mrc, "writing history");
            break;
        }
        if (!(mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)) && k.mv_size == slen + 16 &&
            memcmp(k.mv_data, at, slen + 16) == 0)
            mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
        mdb_cursor_close(c);
        if (mrc == MDB_NOTFOUND || (!mrc && (!of_record(&k, hkey, slen) || !is_delta(&v))))
            break;
        if (mrc) {
            rc = ads_db__lmdb(txn, err, mrc, "writing history");
            break;
        }
        row_env e;
        memcpy(at, k.mv_data, slen + 16);
        if ((rc = ads_row__parse_history(&e, k.mv_data, k.mv_size, v.mv_data, v.mv_size,
                                         "history row", err)))
            break;
        if (e.len < ADS_HIST_REF || get_le32(e.data) != fsum)
            break; /* another keyframe's: so are the rest */
        if ((rc = ads_hist__apply(&e, fsum, fdata, flen, &whole, "history row", err)) ||
            (rc = build(&val, at, slen, e.flags, &e, e.data, e.len, err)) ||
            (rc = ads_db__put(txn, txn->db->history, at, slen + 16, val.p, val.len, 0, err)))
            break;
    }
    ads_buf_free(&whole);
    ads_buf_free(&val);
    return rc;
}

/* Where a row put at hkey goes: *middle when rows of the record come after
 * it; its keyframe kf (*found: 1 a history row, 2 the record's base, 0
 * none), and the differences between them in the history (*steps). */
static int place(ads_txn *txn, MDB_cursor *c, const unsigned char *hkey, size_t slen,
                 bool *middle, row_env *kf, int *found, unsigned *steps, ads_error *err)
{
    MDB_val k = {slen + 16, (void *)hkey}, v;
    int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
    *middle = rc == 0 && of_record(&k, hkey, slen);
    /* the row before hkey: the one before the row found, or the last */
    if (rc == 0)
        rc = mdb_cursor_get(c, &k, &v, MDB_PREV);
    else if (rc == MDB_NOTFOUND)
        rc = mdb_cursor_get(c, &k, &v, MDB_LAST);
    if (rc == 0 || rc == MDB_NOTFOUND)
        rc = walk_back(c, rc, hkey, slen, &k, &v, steps, found);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "writing history");
    bool in_history = *found;
    rc = parse_keyframe(txn, hkey, slen, *found, &k, &v, kf, "history row", err);
    if (rc < 0)
        return rc;
    *found = rc == 0 ? 0 : in_history ? 1 : 2;
    return 0;
}

/* ads_hist__put on cursor c of the history table. */
static int put_on(ads_txn *txn, MDB_cursor *c, const unsigned char *hkey, size_t slen,
                  const row_env *e, ads_buf *scratch, ads_buf *base, ads_error *err)
{
    bool middle = false;
    int found = 0;
    unsigned steps = 0;
    const unsigned char *data = e->data;
    size_t len = e->len;
    unsigned flags = e->flags;
    row_env kf;
    int rc = place(txn, c, hkey, slen, &middle, &kf, &found, &steps, err);
    if (rc)
        return rc;
    bool delta = false;
    ads_buf_clear(scratch);
    ads_buf_clear(base);
    if (found) {
        unsigned char ref[ADS_HIST_REF];
        put_le32(ref, kf.sum);
        ads_buf_add(scratch, ref, sizeof ref);
        int d = ads_msgpack__delta(scratch, data, len, kf.data, kf.len);
        if (d < 0 || scratch->failed)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        /* at the end, whole every keyframe_rows rows (a base, whose rows
         * since are not all in the history, counts as that many) */
        delta = d == 0 && (middle || (found == 1 && steps + 1 < txn->db->keyframe_rows &&
                                      scratch->len * 4 <= len * 3));
        if (middle && !delta) {
            /* the keyframe of the rows after this one, which it replaces */
            ads_buf_add(base, kf.data, kf.len);
            if (base->failed)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
        }
    }
    uint32_t fsum = found ? kf.sum : 0;
    /* the stored value: into base after the steps, or scratch for a whole row */
    ads_buf *val = delta ? base : scratch;
    if ((rc = ads_db__format_rows(txn, err)))
        return rc;
    if ((rc = delta ? build(val, hkey, slen, flags | ROW_DELTA | ROW_KEYDATES, e,
                            (const unsigned char *)scratch->p, scratch->len, err)
                    : build(val, hkey, slen, flags, e, data, len, err)))
        return rc;
    if ((rc = ads_db__cursor_put(txn, c, hkey, slen + 16, val->p, val->len, 0, err)))
        return rc;
    if (middle && found && !delta)
        rc = whole_after(txn, hkey, slen, (const unsigned char *)base->p, base->len, fsum, err);
    return rc;
}

int ads_hist__put(ads_txn *txn, const unsigned char *hkey, size_t slen, unsigned flags, double ts,
                  int32_t offset, int64_t systs, const unsigned char *full_key, size_t full_key_len,
                  const unsigned char *data, size_t len, ads_buf *scratch, ads_buf *base,
                  ads_error *err)
{
    row_env e = {flags, ts, offset, systs, full_key, full_key_len, data, len, 0};
    if (!txn->db->history_rows)
        return ads_hput__row(txn, hkey, slen, &e, scratch, base, err); /* in chunks (hput.c) */
    /* one cursor finds the keyframe and puts the row: LMDB looks for a key
     * on the cursor's page first, and the record's rows are there */
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "writing history");
    rc = put_on(txn, c, hkey, slen, &e, scratch, base, err);
    mdb_cursor_close(c);
    return rc;
}

int ads_hist__trim(ads_txn *txn, const unsigned char *skey, size_t slen, const unsigned char *kept,
                   ads_error *err)
{
    MDB_val k = {slen + 16, (void *)kept}, v;
    int rc = kept ? mdb_get(txn->txn, txn->db->history, &k, &v) : MDB_NOTFOUND;
    if (rc && rc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, rc, "trimming history");
    if (rc == MDB_NOTFOUND || !is_delta(&v))
        return ads_db__del(txn, txn->db->bases, skey, slen, err); /* no difference needs it */
    /* a difference: its keyframe is a row that goes, or the base already */
    MDB_cursor *c;
    unsigned steps;
    int found;
    if ((rc = mdb_cursor_open(txn->txn, txn->db->history, &c)))
        return ads_db__lmdb(txn, err, rc, "trimming history");
    rc = keyframe_before(c, kept, slen, &k, &v, &steps, &found);
    mdb_cursor_close(c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "trimming history");
    if (!found)
        return 0;
    /* its bytes as they are (the checksum the differences name), copied:
     * they are LMDB's, and the put may move pages */
    ads_buf copy = ADS_BUF_INIT;
    ads_buf_add(&copy, v.mv_data, v.mv_size);
    rc = copy.failed ? ads_error_set(err, ADS_ENOMEM, "out of memory")
                     : ads_db__put(txn, txn->db->bases, skey, slen, copy.p, copy.len, 0, err);
    ads_buf_free(&copy);
    return rc;
}

int ads_hist__purge(ads_txn *txn, const unsigned char *skey, size_t slen, ads_error *err)
{
    return ads_db__del(txn, txn->db->bases, skey, slen, err);
}

/* ---- reading in order ---- */

/* The walk's keyframe: data (len bytes, checksum sum) of the record whose
 * stored key is hkey's first rl bytes. */
static int note_keyframe(ads_hist_walk *w, const unsigned char *hkey, size_t rl,
                         const unsigned char *data, size_t len, uint32_t sum, bool copy,
                         ads_error *err)
{
    w->rlen = 0;
    if (rl == 0 || rl > sizeof w->rec)
        return 0;
    if (copy) {
        ads_buf_clear(&w->copy);
        ads_buf_add(&w->copy, data, len);
        if (w->copy.failed)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        data = (const unsigned char *)w->copy.p;
    }
    memcpy(w->rec, hkey, rl);
    w->rlen = rl;
    w->kf = data;
    w->kflen = len;
    w->sum = sum;
    return 0;
}

int ads_hist__walk(ads_hist_walk *w, ads_txn *txn, const unsigned char *hkey, size_t hklen,
                   row_env *env, bool copy, const char *where, ads_error *err)
{
    size_t rl = hklen > 16 ? hklen - 16 : 0;
    if (!(env->flags & ROW_DELTA))
        return note_keyframe(w, hkey, rl, env->data, env->len, env->sum, copy, err);
    bool known = w->rlen && w->rlen == rl && memcmp(w->rec, hkey, rl) == 0 &&
                 env->len >= ADS_HIST_REF && get_le32(env->data) == w->sum;
    if (!known) {
        /* the first difference of a walk that began after its keyframe, or
         * whose keyframe is the record's base */
        row_env kf;
        int rc = rl ? ads_hist__keyframe(txn, hkey, rl, &kf, where, err) : 0;
        if (rc < 0)
            return rc;
        if (rc == 0)
            return no_keyframe(txn, where, err);
        if ((rc = note_keyframe(w, hkey, rl, kf.data, kf.len, kf.sum, copy, err)))
            return rc;
    }
    return ads_hist__apply(env, w->sum, w->kf, w->kflen, &w->out, where, err);
}

void ads_hist__walk_free(ads_hist_walk *w)
{
    ads_buf_free(&w->copy);
    ads_buf_free(&w->out);
}
