/*
 * engine/verify.c: checking a whole store (shared/spec/datastore.md section
 * 5). One read transaction walks `latest` and `history` and reports, for
 * each problem, what is wrong and where (type and key):
 *   - a row failing its checksum, envelope or MessagePack checks;
 *   - a row of a type id with no Type record;
 *   - a key that does not match the key attributes of its row;
 *   - a history row with no latest row, or dated after its latest row;
 *   - record, deleted and history counts that disagree with the rows;
 *   - a generated key (increment counter, or an ordered id of this node)
 *     beyond what the store's generators have issued.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

typedef struct tcount {
    uint32_t id;
    uint64_t records, deleted, history;
    uint64_t max_luid; /* largest increment key seen */
} tcount;

typedef struct vstate {
    ads_txn *txn;
    void (*report)(void *ctx, const char *problem);
    ads_progress_fn progress;
    uint64_t total;
    void *ctx;
    ads_verify_result *res;
    tcount *counts;
    size_t ncounts, cap;
    ads_arena *a;
    ads_idgen_state idgen;
    bool have_idgen;
    uint64_t packed; /* rows of the packed envelope (version 2) seen */
    uint64_t chunks; /* history chunks seen (engine/chunk.c) */
    unsigned char clast[ADS_KEY_INLINE_MAX + 16]; /* the last chunk's last row's key */
    size_t clast_len; /* 0: the entry before was no chunk */
} vstate;

/* Count a row of the packed envelope: a store holding one must be of
 * format 6 (check_format). */
static void note_envelope(vstate *vs, const MDB_val *v)
{
    vs->packed += v->mv_size > 4 && ((const unsigned char *)v->mv_data)[4] == ADS_ROW_VERSION;
}

static void problem(vstate *vs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(vstate *vs, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vs->res->problems++;
    if (vs->report)
        vs->report(vs->ctx, msg);
}

static tcount *count_of(vstate *vs, uint32_t id)
{
    for (size_t i = 0; i < vs->ncounts; i++)
        if (vs->counts[i].id == id)
            return &vs->counts[i];
    if (vs->ncounts == vs->cap) {
        size_t cap = vs->cap ? 2 * vs->cap : 16;
        tcount *more = realloc(vs->counts, cap * sizeof *more);
        if (!more)
            return NULL;
        vs->counts = more;
        vs->cap = cap;
    }
    tcount *c = &vs->counts[vs->ncounts++];
    memset(c, 0, sizeof *c);
    c->id = id;
    return c;
}


static const char *type_name(vstate *vs, uint32_t id, char *buf, size_t cap)
{
    const ads_type *t;
    ads_error quiet;
    if (ads_types__by_id(&t, vs->txn, id, &quiet) == 0)
        return t->name;
    snprintf(buf, cap, "type id %u", (unsigned)id);
    return buf;
}

/* The full key computed from a row's key attributes. */
static int row_key(ads_buf *out, ads_txn *txn, const ads_type *t, const unsigned char *data,
                   size_t len, ads_arena *a, ads_error *err)
{
    ads_msgpack_view mv;
    int rc = ads_msgpack__view_open(&mv, data, len, ads_txn__names(txn), a, err);
    if (rc)
        return rc;
    ads_key__typeid(out, t->id);
    for (size_t i = 0; i < t->nkeys; i++) {
        ads_value v;
        const ads_expr *e = NULL;
        rc = ads_msgpack_view_lookup(&v, &e, &mv, t->keys[i].p, t->keys[i].len, err);
        if (rc < 0)
            return rc;
        if (rc == 0 || e)
            return ads_error_set(err, ADS_EINVAL, "key attribute %.*s is missing or not a value",
                                 (int)t->keys[i].len, t->keys[i].p);
        if ((rc = ads_key__value(out, &v, t->keys[i].p, err)))
            return rc;
    }
    return 0;
}

static void check_generated(vstate *vs, const ads_type *t, tcount *c, const unsigned char *data,
                            size_t len, const char *where)
{
    if (!t->autogen)
        return;
    ads_msgpack_view mv;
    ads_value v;
    const ads_expr *e = NULL;
    if (ads_msgpack__view_open(&mv, data, len, ads_txn__names(vs->txn), vs->a, NULL) ||
        ads_msgpack_view_lookup(&v, &e, &mv, t->keys[0].p, t->keys[0].len, NULL) != 1 || e ||
        v.type != ADS_IDENT)
        return;
    ads_id id = v.u.id;
    if (ads_id_kind_of(id) == ADS_ID_INCREMENT && t->method == ADS_ID_INCREMENT) {
        if (id.lo > c->max_luid)
            c->max_luid = id.lo;
    } else if (ads_id_kind_of(id) == ADS_ID_ORDERED && vs->have_idgen) {
        ads_ouid_fields f;
        ads_ouid_unpack(&f, id);
        if (f.node != vs->idgen.node || f.backfill || !(f.clockseq & 1))
            return;
        const ads_clock_track *tr = &vs->idgen.current;
        if ((f.clockseq >> 1) == tr->k && (!tr->used || f.time > tr->hi))
            problem(vs, "%s: generated id dated %llu is ahead of the generator (last second %llu)",
                    where, (unsigned long long)f.time, (unsigned long long)tr->hi);
    }
}

static int walk_latest(vstate *vs, ads_error *err)
{
    ads_txn *txn = vs->txn;
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->latest, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying");
    MDB_val k, v;
    char where[700], kt[400], tn[64];
    ads_buf full = ADS_BUF_INIT;
    int mrc;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST); mrc == 0;
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        ads_arena_reset(vs->a);
        vs->res->records++;
        vs->res->rows++;
        if (vs->progress && (vs->res->rows & 4095) == 0)
            vs->progress(vs->ctx, vs->res->rows, vs->total);
        if (k.mv_size < 5) {
            problem(vs, "latest: a key of %zu bytes", k.mv_size);
            continue;
        }
        note_envelope(vs, &v);
        uint32_t id = ads_key__get_typeid(k.mv_data);
        row_env env;
        ads_error e;
        const char *tname = type_name(vs, id, tn, sizeof tn);
        if (ads_row__parse(&env, k.mv_data, k.mv_size, v.mv_data, v.mv_size, "row", &e)) {
            ads_key__text(kt, sizeof kt, k.mv_data, k.mv_size, vs->a);
            problem(vs, "type %s, key %s: latest %s", tname, kt, e.message);
            continue;
        }
        const unsigned char *fk = env.full_key ? env.full_key : k.mv_data;
        size_t fl = env.full_key ? env.full_key_len : k.mv_size;
        ads_key__text(kt, sizeof kt, fk, fl, vs->a);
        snprintf(where, sizeof where, "type %s, key %s", tname, kt);
        if (env.flags & ROW_DELTA) {
            problem(vs, "%s: the latest row is kept as a difference (only history rows are)",
                    where);
            continue;
        }
        if (ads_msgpack__check_row(env.data, env.len, ads_txn__names(txn), &e)) {
            problem(vs, "%s: latest row: %s", where, e.message);
            continue;
        }
        const ads_type *t;
        if (ads_types__by_id(&t, txn, id, &e)) {
            problem(vs, "%s: the row's type has no Type record", where);
            continue;
        }
        ads_buf_clear(&full);
        if (row_key(&full, txn, t, env.data, env.len, vs->a, &e)) {
            problem(vs, "%s: %s", where, e.message);
        } else if (full.len != fl || memcmp(full.p, fk, fl) != 0) {
            problem(vs, "%s: the key does not match the row's key attributes", where);
        } else if (env.full_key) {
            unsigned char stored[ADS_KEY_INLINE_MAX];
            size_t sl = ads_key__stored(stored, fk, fl, 0);
            if (sl != k.mv_size || memcmp(stored, k.mv_data, ADS_KEY_PREFIX + 16) != 0)
                problem(vs, "%s: the long key's hash does not match", where);
        }
        tcount *tc = count_of(vs, id);
        if (!tc) {
            ads_buf_free(&full);
            mdb_cursor_close(c);
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        }
        tc->records++;
        tc->deleted += (env.flags & ROW_DELETED) != 0;
        check_generated(vs, t, tc, env.data, env.len, where);
    }
    ads_buf_free(&full);
    mdb_cursor_close(c);
    if (mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "verifying");
    return 0;
}

static int name_cmp(const void *x, const void *y)
{
    const ads_str *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->p, b->p, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The attribute-name table: ids 0, 1, ... with no gap, each a name of 1 to
 * ADS_MAX_NAME_LEN bytes, no name twice, and the store of format 3 when it
 * holds any. (Rows are checked to name only ids it holds as they are read.) */
static int walk_names(vstate *vs, ads_error *err)
{
    ads_txn *txn = vs->txn;
    /* a handle that found no table when it opened cannot read one made
     * since in its own transactions (LMDB's table handles) */
    if (txn->db->names_late || !txn->db->names_dbi)
        return 0;
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->names_dbi, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying");
    ads_str *names = NULL;
    size_t n = 0, cap = 0;
    MDB_val k, v;
    int mrc;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST); mrc == 0 && !rc;
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const unsigned char *p = k.mv_data;
        long long id = k.mv_size == 4 ? (long long)((uint64_t)p[0] << 24 | (uint64_t)p[1] << 16 |
                                                    (uint64_t)p[2] << 8 | p[3])
                                      : -1;
        if (id != (long long)n) {
            problem(vs, "attribute names: entry %zu has id %lld (ids run from 0 without gaps)",
                    n, id);
            break;
        }
        if (v.mv_size == 0 || v.mv_size > ADS_MAX_NAME_LEN)
            problem(vs, "attribute names: id %zu names %zu bytes", n, v.mv_size);
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            ads_str *more = realloc(names, nc * sizeof *more);
            if (!more) {
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                break;
            }
            names = more;
            cap = nc;
        }
        names[n].p = v.mv_data;
        names[n].len = v.mv_size;
        n++;
    }
    mdb_cursor_close(c);
    if (!rc && mrc && mrc != MDB_NOTFOUND)
        rc = ads_db__lmdb(txn, err, mrc, "verifying");
    if (!rc && n) {
        qsort(names, n, sizeof *names, name_cmp);
        for (size_t i = 1; i < n; i++)
            if (name_cmp(&names[i - 1], &names[i]) == 0)
                problem(vs, "attribute names: '%.*s' has two ids",
                        (int)(names[i].len > 60 ? 60 : names[i].len), names[i].p);
        unsigned fmt = 0;
        MDB_val fv;
        if (ads_db__meta_get(txn, ADS_META_FORMAT, strlen(ADS_META_FORMAT), &fv, NULL) == 1 &&
            fv.mv_size == 4)
            fmt = ((const unsigned char *)fv.mv_data)[0];
        if (fmt < ADS_DB_FORMAT_NAMES)
            problem(vs, "attribute names: the store holds %zu but is of format %u (not %d)", n,
                    fmt, ADS_DB_FORMAT_NAMES);
    }
    free(names);
    return rc;
}

/* A history row made whole (env) under its history key k: its row reads,
 * its key holds its dates, its record has a latest row no older than it. */
static int check_history_row(vstate *vs, const MDB_val *k, const row_env *env, const char *tname,
                             const char *kt, ads_error *err)
{
    ads_txn *txn = vs->txn;
    ads_error e;
    size_t rl = k->mv_size - 16;
    if (ads_msgpack__check_row(env->data, env->len, ads_txn__names(txn), &e)) {
        problem(vs, "type %s, key %s: history row: %s", tname, kt, e.message);
        return 0;
    }
    unsigned char sortable[8];
    ads_key__sortable_double(sortable, env->ts);
    uint64_t sys = 0;
    for (int i = 0; i < 8; i++)
        sys = sys << 8 | ((const unsigned char *)k->mv_data)[rl + 8 + i];
    if (memcmp(sortable, (const unsigned char *)k->mv_data + rl, 8) != 0 ||
        sys != (uint64_t)env->systs)
        problem(vs, "type %s, key %s: a history row filed under the wrong time", tname, kt);
    MDB_val lk = {rl, k->mv_data}, lv;
    int g = mdb_get(txn->txn, txn->db->latest, &lk, &lv);
    if (g == MDB_NOTFOUND) {
        problem(vs, "type %s, key %s: history rows without a latest row", tname, kt);
    } else if (g) {
        return ads_db__lmdb(txn, err, g, "verifying");
    } else {
        row_env le;
        if (ads_row__parse(&le, lk.mv_data, lk.mv_size, lv.mv_data, lv.mv_size, "row", &e) == 0 &&
            (le.ts < env->ts || (le.ts == env->ts && le.systs < env->systs)))
            problem(vs, "type %s, key %s: a history row is newer than the latest row", tname,
                    kt);
    }
    tcount *tc = count_of(vs, ads_key__get_typeid(k->mv_data));
    if (!tc)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    tc->history++;
    return 0;
}

/* The rows of the chunk v under k (engine/chunk.c), each checked. */
static int check_chunk(vstate *vs, const MDB_val *k, const MDB_val *v, const char *tname,
                       char *kt, size_t ktcap, ads_buf *whole, ads_error *err)
{
    ads_chunk c;
    ads_error e;
    vs->chunks++;
    if (ads_chunk__parse(&c, k->mv_data, k->mv_size, v->mv_data, v->mv_size, "history", &e)) {
        vs->res->rows++;
        problem(vs, "type %s, key %s: %s", tname, kt, e.message);
        return 0;
    }
    if (c.full_key)
        ads_key__text(kt, ktcap, c.full_key, c.full_key_len, vs->a);
    unsigned char *key = vs->clast;
    vs->clast_len = k->mv_size;
    size_t rl = k->mv_size - 16;
    memcpy(key, k->mv_data, rl);
    for (unsigned i = 0; i < c.n; i++) {
        vs->res->rows += i > 0;
        const chunk_row *r = &c.rows[i];
        row_env env = {r->flags & ROW_DELETED, r->ts, r->offset, r->systs, c.full_key,
                       c.full_key_len, NULL, 0, c.sum};
        if (ads_chunk__row(&c, i, whole, &env.data, &env.len, "history row", &e)) {
            problem(vs, "type %s, key %s: %s", tname, kt, e.message);
            continue;
        }
        ads_key__sortable_double(key + rl, r->ts);
        for (int b = 0; b < 8; b++)
            key[rl + 8 + b] = (unsigned char)((uint64_t)r->systs >> (56 - 8 * b));
        MDB_val rk = {rl + 16, key};
        int rc = check_history_row(vs, &rk, &env, tname, kt, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* One history entry (k, v): a row, or a chunk of rows. */
static int check_history_entry(vstate *vs, const MDB_val *k, const MDB_val *v,
                               ads_hist_walk *hw, ads_buf *whole, ads_error *err)
{
    char kt[400], tn[64];
    if (k->mv_size < 5 + 16) {
        problem(vs, "history: a key of %zu bytes", k->mv_size);
        return 0;
    }
    note_envelope(vs, v);
    size_t rl = k->mv_size - 16;
    uint32_t id = ads_key__get_typeid(k->mv_data);
    const char *tname = type_name(vs, id, tn, sizeof tn);
    ads_key__text(kt, sizeof kt, k->mv_data, rl, vs->a);
    if (vs->clast_len) {
        size_t n = vs->clast_len < k->mv_size ? vs->clast_len : k->mv_size;
        int c = memcmp(k->mv_data, vs->clast, n);
        if (c < 0 || (c == 0 && k->mv_size <= vs->clast_len))
            problem(vs, "type %s, key %s: the history chunk before holds rows past this one",
                    tname, kt);
        vs->clast_len = 0;
    }
    if (ads_chunk__is(v->mv_data, v->mv_size))
        return check_chunk(vs, k, v, tname, kt, sizeof kt, whole, err);
    row_env env;
    ads_error e;
    if (ads_row__parse(&env, k->mv_data, k->mv_size, v->mv_data, v->mv_size, "history row",
                       &e)) {
        problem(vs, "type %s, key %s: %s", tname, kt, e.message);
        return 0;
    }
    if (env.full_key)
        ads_key__text(kt, sizeof kt, env.full_key, env.full_key_len, vs->a);
    /* a row kept as a difference: made whole from its keyframe, the last
     * whole row of its record walked (or the nearest found before it) */
    if (ads_hist__walk(hw, vs->txn, k->mv_data, k->mv_size, &env, false, "history row", &e)) {
        problem(vs, "type %s, key %s: %s", tname, kt, e.message);
        return 0;
    }
    return check_history_row(vs, k, &env, tname, kt, err);
}

static int walk_history(vstate *vs, ads_error *err)
{
    ads_txn *txn = vs->txn;
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn->txn, txn->db->history, &c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying");
    MDB_val k, v;
    ads_hist_walk hw = {.rlen = 0};
    ads_buf whole = ADS_BUF_INIT;
    int mrc;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST); mrc == 0;
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        ads_arena_reset(vs->a);
        vs->res->rows++;
        if (vs->progress && (vs->res->rows & 4095) == 0)
            vs->progress(vs->ctx, vs->res->rows, vs->total);
        if ((rc = check_history_entry(vs, &k, &v, &hw, &whole, err)))
            break;
    }
    mdb_cursor_close(c);
    ads_hist__walk_free(&hw);
    ads_buf_free(&whole);
    if (rc)
        return rc;
    if (mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "verifying");
    return 0;
}

/* The keyframes retention kept in `bases` (engine/history.c): each whole,
 * sound, and of a record that still has history rows. */
static int walk_bases(vstate *vs, ads_error *err)
{
    ads_txn *txn = vs->txn;
    if (!txn->db->bases)
        return 0;
    MDB_cursor *c, *hc;
    int rc = mdb_cursor_open(txn->txn, txn->db->bases, &c);
    if (!rc && (rc = mdb_cursor_open(txn->txn, txn->db->history, &hc)))
        mdb_cursor_close(c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying");
    MDB_val k, v;
    char kt[400], tn[64];
    int mrc;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST); mrc == 0;
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        ads_arena_reset(vs->a);
        if (k.mv_size < 5) {
            problem(vs, "bases: a key of %zu bytes", k.mv_size);
            continue;
        }
        note_envelope(vs, &v);
        const char *tname = type_name(vs, ads_key__get_typeid(k.mv_data), tn, sizeof tn);
        ads_key__text(kt, sizeof kt, k.mv_data, k.mv_size, vs->a);
        row_env env;
        ads_error e;
        if (ads_row__parse_found(&env, k.mv_data, k.mv_size, v.mv_data, v.mv_size,
                                 "history keyframe", &e)) {
            problem(vs, "type %s, key %s: %s", tname, kt, e.message);
            continue;
        }
        if (env.flags & ROW_DELTA) {
            problem(vs, "type %s, key %s: a history keyframe kept as a difference", tname, kt);
            continue;
        }
        if (ads_msgpack__check_row(env.data, env.len, ads_txn__names(txn), &e)) {
            problem(vs, "type %s, key %s: history keyframe: %s", tname, kt, e.message);
            continue;
        }
        /* the record's first history row comes right after its key */
        MDB_val fk = k, fv;
        if ((rc = mdb_cursor_get(hc, &fk, &fv, MDB_SET_RANGE)) && rc != MDB_NOTFOUND)
            break;
        if (rc || fk.mv_size != k.mv_size + 16 || memcmp(fk.mv_data, k.mv_data, k.mv_size))
            problem(vs, "type %s, key %s: a history keyframe of a record without history",
                    tname, kt);
        rc = 0;
    }
    mdb_cursor_close(hc);
    mdb_cursor_close(c);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying");
    if (mrc != MDB_NOTFOUND)
        return ads_db__lmdb(txn, err, mrc, "verifying");
    return 0;
}

/* Counts and sequences against the rows. */
/* Rows of the packed envelope in a store whose format says a build that
 * knows only the 32-byte envelope may open it. */
static void check_format(vstate *vs)
{
    MDB_val fv;
    unsigned fmt = 0;
    if (ads_db__meta_get(vs->txn, ADS_META_FORMAT, strlen(ADS_META_FORMAT), &fv, NULL) == 1 &&
        fv.mv_size == 4)
        fmt = ((const unsigned char *)fv.mv_data)[0];
    if (vs->packed && fmt < ADS_DB_FORMAT_ENVELOPE)
        problem(vs,
                "rows: the store holds %llu rows of the packed envelope but is of format %u "
                "(not %d)",
                (unsigned long long)vs->packed, fmt, ADS_DB_FORMAT_ENVELOPE);
    if (vs->chunks && fmt < ADS_DB_FORMAT_CHUNKS)
        problem(vs, "history: the store holds %llu chunks of rows but is of format %u (not %d)",
                (unsigned long long)vs->chunks, fmt, ADS_DB_FORMAT_CHUNKS);
}

static int check_counts(vstate *vs, ads_error *err)
{
    ads_txn *txn = vs->txn;
    char tn[64];
    /* every counter in meta must match, and every type seen must have one */
    for (size_t i = 0; i < vs->ncounts; i++) {
        tcount *c = &vs->counts[i];
        ads_type probe = {.id = c->id};
        ads_type_counts m;
        int rc = ads_txn_type_counts(&m, txn, &probe, err);
        if (rc)
            return rc;
        const char *name = type_name(vs, c->id, tn, sizeof tn);
        if (m.records != c->records || m.deleted != c->deleted || m.history != c->history)
            problem(vs,
                    "type %s: counts say records %llu (deleted %llu), history rows %llu; the "
                    "rows say %llu (%llu), %llu",
                    name, (unsigned long long)m.records, (unsigned long long)m.deleted,
                    (unsigned long long)m.history, (unsigned long long)c->records,
                    (unsigned long long)c->deleted, (unsigned long long)c->history);
        if (c->max_luid) {
            const ads_type *t;
            if (ads_types__by_id(&t, txn, c->id, NULL) == 0) {
                char key[512];
                snprintf(key, sizeof key, "%stype:%s", ADS_META_SEQ_PREFIX, t->folded);
                MDB_val v;
                uint64_t have = 0;
                if (ads_db__meta_get(txn, key, strlen(key), &v, NULL) == 1 && v.mv_size == 8)
                    memcpy(&have, v.mv_data, 8);
                if (have < c->max_luid)
                    problem(vs,
                            "type %s: its sequence is at %llu but a record has generated key "
                            "#%llu",
                            t->name, (unsigned long long)have, (unsigned long long)c->max_luid);
            }
        }
    }
    /* counters of types with no rows */
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->txn, txn->db->meta, &cur);
    if (rc)
        return ads_db__lmdb(txn, err, rc, "verifying");
    size_t pl = strlen(ADS_META_COUNT_PREFIX);
    MDB_val k = {pl, (void *)ADS_META_COUNT_PREFIX}, v;
    int mrc;
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
         mrc == 0 && k.mv_size == pl + 4 && memcmp(k.mv_data, ADS_META_COUNT_PREFIX, pl) == 0;
         mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        uint32_t id = ads_key__get_typeid((const unsigned char *)k.mv_data + pl);
        bool seen = false;
        for (size_t i = 0; i < vs->ncounts && !seen; i++)
            seen = vs->counts[i].id == id;
        if (!seen)
            problem(vs, "type %s: counts say it has rows, but it has none",
                    type_name(vs, id, tn, sizeof tn));
    }
    mdb_cursor_close(cur);
    return 0;
}

/* Rows in latest and history, for progress. */
static uint64_t table_rows(ads_txn *txn)
{
    MDB_stat a, b;
    if (mdb_stat(txn->txn, txn->db->latest, &a) || mdb_stat(txn->txn, txn->db->history, &b))
        return 0;
    return a.ms_entries + b.ms_entries;
}

int ads_db_verify(ads_verify_result *out, ads_db *db,
                  void (*report)(void *ctx, const char *problem), void *ctx, ads_error *err)
{
    return ads_db_verify_ex(out, db, report, NULL, ctx, err);
}

int ads_db_verify_ex(ads_verify_result *out, ads_db *db,
                     void (*report)(void *ctx, const char *problem), ads_progress_fn progress,
                     void *ctx, ads_error *err)
{
    if (!db || !out)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    vstate vs = {0};
    vs.report = report;
    vs.progress = progress;
    vs.ctx = ctx;
    vs.res = out;
    int rc = ads_txn_begin(&vs.txn, db, ADS_TXN_READONLY, err);
    if (rc)
        return rc;
    vs.total = table_rows(vs.txn);
    if (!(vs.a = ads_arena_new())) {
        ads_txn_abort(vs.txn);
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    }
    ads_error e;
    if (ads_txn_idgen_state(&vs.idgen, vs.txn, &e) == 0)
        vs.have_idgen = true;
    else
        problem(&vs, "identifier state: %s", e.message);
    if (!(rc = walk_names(&vs, err)) && !(rc = walk_latest(&vs, err)) &&
        !(rc = walk_history(&vs, err)) && !(rc = walk_bases(&vs, err)) &&
        !(rc = check_counts(&vs, err))) {
        check_format(&vs);
        rc = ads_index__verify(vs.txn, report, ctx, &out->problems, err);
    }
    if (!rc && progress)
        progress(ctx, out->rows, out->rows);
    free(vs.counts);
    ads_arena_free(vs.a);
    ads_txn_abort(vs.txn);
    return rc;
}

/* ---- statistics ---- */

typedef struct tbytes {
    uint32_t id;
    uint64_t latest, history;
} tbytes;

typedef struct stats_walk {
    ads_txn *txn;
    tbytes *t;
    size_t n, cap;
    int (*fn)(void *ctx, const ads_type_stats *s);
    void *ctx;
    ads_error *err;
    int rc;
} stats_walk;

static tbytes *bytes_of(stats_walk *w, uint32_t id)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->t[i].id == id)
            return &w->t[i];
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        tbytes *more = realloc(w->t, cap * sizeof *more);
        if (!more)
            return NULL;
        w->t = more;
        w->cap = cap;
    }
    tbytes *b = &w->t[w->n++];
    memset(b, 0, sizeof *b);
    b->id = id;
    return b;
}

static int stats_one(void *ctx, const ads_type *t, ads_error *err)
{
    stats_walk *w = ctx;
    ads_type_stats s;
    s.name = t->name;
    int rc = ads_txn_type_counts(&s.counts, w->txn, t, err);
    if (rc)
        return rc;
    s.latest_bytes = s.history_bytes = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->t[i].id == t->id) {
            s.latest_bytes = w->t[i].latest;
            s.history_bytes = w->t[i].history;
        }
    return w->fn(w->ctx, &s);
}

int ads_db_type_stats(ads_db *db, int (*fn)(void *ctx, const ads_type_stats *s),
                      ads_progress_fn progress, void *ctx, ads_error *err)
{
    if (!db || !fn)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_txn *txn;
    int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
    if (rc)
        return rc;
    stats_walk w = {txn, NULL, 0, 0, fn, ctx, err, 0};
    uint64_t total = table_rows(txn), done = 0;
    MDB_dbi dbis[2] = {db->latest, db->history};
    for (int d = 0; d < 2 && !rc; d++) {
        MDB_cursor *c;
        MDB_val k, v;
        if ((rc = mdb_cursor_open(txn->txn, dbis[d], &c))) {
            rc = ads_db__lmdb(txn, err, rc, "reading the store");
            break;
        }
        int mrc;
        for (mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST); mrc == 0;
             mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
            if (k.mv_size < 4)
                continue;
            tbytes *b = bytes_of(&w, ads_key__get_typeid(k.mv_data));
            if (!b) {
                rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
                break;
            }
            *(d == 0 ? &b->latest : &b->history) += k.mv_size + v.mv_size;
            if (progress && (++done & 4095) == 0)
                progress(ctx, done, total);
        }
        mdb_cursor_close(c);
        if (!rc && mrc != MDB_NOTFOUND)
            rc = ads_db__lmdb(txn, err, mrc, "reading the store");
    }
    if (!rc && progress)
        progress(ctx, total, total);
    /* every listed type, with its counters */
    if (!rc)
        rc = ads_txn_each_type(txn, stats_one, &w, err);
    free(w.t);
    ads_txn_abort(txn);
    return rc;
}
