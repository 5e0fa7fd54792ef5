/*
 * engine/seq.c: identifiers and sequences. The OUID generator state, the
 * increment counters and the FLUID / k-ordered generator state live in the
 * meta table. A write transaction reads each at first use, keeps it in
 * memory while it hands out values, and writes it back at commit: values and
 * the rows that use them commit together. An aborted transaction hands out
 * nothing that a later commit repeats: db.c then commits the generator state,
 * and only that, in the parent of the aborted write (a gap in increment ids).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int load_idgen(ads_txn *txn, ads_error *err)
{
    if (txn->idgen_loaded)
        return 0;
    MDB_val v;
    int rc = ads_db__meta_get(txn, ADS_META_IDGEN, strlen(ADS_META_IDGEN), &v, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return ads_error_set(err, ADS_ECORRUPT, "store metadata has no identifier state");
    if (v.mv_size != ADS_IDGEN_STATE_BYTES)
        return ads_error_set(err, ADS_ECORRUPT, "store metadata 'idgen' has %zu bytes, expected %d",
                             v.mv_size, ADS_IDGEN_STATE_BYTES);
    if ((rc = ads_idgen_state_decode(&txn->idgen, v.mv_data, v.mv_size, err)))
        return rc;
    txn->idgen_loaded = true;
    return 0;
}

int ads_txn_idgen_state(ads_idgen_state *out, ads_txn *txn, ads_error *err)
{
    int rc = load_idgen(txn, err);
    if (!rc)
        *out = txn->idgen;
    return rc;
}

/* ---- cached meta values ---- */

static seq_cache *find_cached(ads_txn *txn, const char *key)
{
    for (size_t i = 0; i < txn->nseqs; i++)
        if (strcmp(txn->seqs[i].key, key) == 0)
            return &txn->seqs[i];
    return NULL;
}

int ads_seq__cached(seq_cache **out, ads_txn *txn, const char *key, size_t len, ads_error *err)
{
    seq_cache *c = find_cached(txn, key);
    if (c) {
        *out = c;
        return 0;
    }
    if (len > ADS_META_CACHE_MAX)
        return ads_error_set(err, ADS_EINVAL, "internal: cached value too large");
    MDB_val v;
    int rc = ads_db__meta_get(txn, key, strlen(key), &v, err);
    if (rc < 0)
        return rc;
    if (rc == 1 && v.mv_size != len)
        return ads_error_set(err, ADS_ECORRUPT, "store metadata '%s' is corrupt", key);
    if (txn->nseqs == txn->capseqs) {
        size_t cap = txn->capseqs ? 2 * txn->capseqs : 4;
        seq_cache *more = realloc(txn->seqs, cap * sizeof *more);
        if (!more)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        txn->seqs = more;
        txn->capseqs = cap;
    }
    c = &txn->seqs[txn->nseqs];
    if (!(c->key = strdup(key)))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    memset(c->val, 0, sizeof c->val);
    c->len = 0;
    if (rc == 1) {
        memcpy(c->val, v.mv_data, len);
        c->len = len;
    }
    c->dirty = false;
    txn->nseqs++;
    *out = c;
    return 0;
}

int ads_seq__next_counter(ads_txn *txn, const char *key, uint64_t *out, ads_error *err)
{
    seq_cache *c = NULL;
    int rc = ads_seq__cached(&c, txn, key, 8, err);
    if (rc)
        return rc;
    uint64_t v = c->len ? get_le(c->val, 8) : 0;
    if (v == UINT64_MAX)
        return ads_error_set(err, ADS_ERANGE, "the counter '%s' is used up", key);
    put_le(c->val, ++v, 8);
    c->len = 8;
    c->dirty = true;
    *out = v;
    return 0;
}

bool ads_seq__dirty(const ads_txn *txn)
{
    if (txn->idgen_dirty)
        return true;
    for (size_t i = 0; i < txn->nseqs; i++)
        if (txn->seqs[i].dirty)
            return true;
    return false;
}

int ads_seq__flush(ads_txn *txn, ads_error *err)
{
    int rc;
    for (size_t i = 0; i < txn->nseqs; i++) {
        seq_cache *c = &txn->seqs[i];
        if (!c->dirty)
            continue;
        if ((rc = ads_db__meta_put(txn, c->key, strlen(c->key), c->val, c->len, err)))
            return rc;
        c->dirty = false;
    }
    if (txn->idgen_dirty) {
        uint8_t b[ADS_IDGEN_STATE_BYTES];
        ads_idgen_state_encode(b, &txn->idgen);
        if ((rc = ads_db__meta_put(txn, ADS_META_IDGEN, strlen(ADS_META_IDGEN), b, sizeof b, err)))
            return rc;
        txn->idgen_dirty = false;
    }
    return 0;
}

/* ---- identifiers ---- */

static int new_ordered(ads_txn *txn, ads_id *out, size_t n, int *event, ads_error *err)
{
    int rc = load_idgen(txn, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        rc = ads_ouid_next(&out[i], &txn->idgen, &txn->db->clock, err);
        if (rc < 0)
            return rc;
        txn->idgen_dirty = true;
        if (rc == ADS_IDGEN_CLOCK_STEPPED_BACK && event)
            *event = rc;
    }
    return 0;
}

int ads_txn_new_ids(ads_id *out, size_t n, int *event, ads_txn *txn, ads_id_kind kind,
                    ads_error *err)
{
    int rc;
    if (event)
        *event = 0;
    if (kind == ADS_ID_RANDOM)
        return ads_uuid_new_n(out, n, err);
    if ((rc = ads_db__need_write(txn, "making identifiers", err)))
        return rc;
    switch (kind) {
    case ADS_ID_ORDERED:
        return new_ordered(txn, out, n, event, err);
    case ADS_ID_INCREMENT:
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            if ((rc = ads_seq__next_counter(txn, ADS_META_LUID, &v, err)))
                return rc;
            out[i] = ads_luid(v);
        }
        return 0;
    default:
        return ads_error_set(err, ADS_EINVAL, "unknown identifier kind %d", (int)kind);
    }
}

#define FLUID_STATE_BYTES 21

int ads_txn_new_fluids(uint64_t *out, size_t n, ads_txn *txn, uint32_t generator, ads_error *err)
{
    ads_fluid_state st;
    char key[32];
    seq_cache *c;
    int rc;

    if ((rc = ads_db__need_write(txn, "making FLUIDs", err)) ||
        (rc = ads_fluid_state_init(&st, generator, ADS_FLUID_EPOCH_ADSTORE_MS, err)))
        return rc;
    snprintf(key, sizeof key, "fluid/%u", (unsigned)generator);
    if ((rc = ads_seq__cached(&c, txn, key, FLUID_STATE_BYTES, err)))
        return rc;
    if (c->len) {
        const uint8_t *b = c->val;
        st.epoch_ms = get_le(b, 8);
        st.last_ts = get_le(b + 8, 8);
        st.seq = (uint32_t)get_le(b + 16, 4);
        st.used = b[20] != 0;
        if (st.seq > ADS_FLUID_SEQ_MAX || st.last_ts > ADS_FLUID_TS_MAX || b[20] > 1)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "store metadata '%s' holds impossible values", key);
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = ads_fluid_next(&out[i], &st, &txn->db->clock, err)))
            return rc;
    put_le(c->val, st.epoch_ms, 8);
    put_le(c->val + 8, st.last_ts, 8);
    put_le(c->val + 16, st.seq, 4);
    c->val[20] = st.used ? 1 : 0;
    c->len = FLUID_STATE_BYTES;
    c->dirty = true;
    return 0;
}

#define KID_STATE_BYTES 13

int ads_txn_new_kids(ads_kid_fields *out, size_t n, ads_txn *txn, ads_error *err)
{
    ads_kid_state st = {0, 0, false};
    seq_cache *c;
    int rc;

    if ((rc = ads_db__need_write(txn, "making k-ordered ids", err)) ||
        (rc = ads_seq__cached(&c, txn, "kid", KID_STATE_BYTES, err)))
        return rc;
    if (c->len) {
        const uint8_t *b = c->val;
        st.last_tick = get_le(b, 8);
        st.seq = (uint32_t)get_le(b + 8, 4);
        st.used = b[12] != 0;
        if (st.seq > ADS_KID_SEQ_MAX || b[12] > 1)
            return ads_error_set(err, ADS_ECORRUPT, "store metadata 'kid' holds impossible values");
    }
    uint32_t node = ads_db_kid_node(txn->db);
    for (size_t i = 0; i < n; i++)
        if ((rc = ads_kid_next(&out[i], &st, node, &txn->db->clock, err)))
            return rc;
    put_le(c->val, st.last_tick, 8);
    put_le(c->val + 8, st.seq, 4);
    c->val[12] = st.used ? 1 : 0;
    c->len = KID_STATE_BYTES;
    c->dirty = true;
    return 0;
}

/* ---- sequences ---- */

/* One id of kind from the store's generators; a backfill id (dated ts) when
 * the transaction is in a backfill batch. */
static int one_id(ads_txn *txn, ads_id_kind kind, const char *counter_key, double ts,
                  ads_id *out, ads_error *err)
{
    int rc;
    if (kind == ADS_ID_RANDOM)
        return ads_uuid_new(out, err);
    if (kind == ADS_ID_INCREMENT) {
        uint64_t v;
        if ((rc = ads_seq__next_counter(txn, counter_key, &v, err)))
            return rc;
        *out = ads_luid(v);
        return 0;
    }
    if (txn->backfill) {
        if ((rc = load_idgen(txn, err)))
            return rc;
        double sec = floor(ts);
        if (!(sec >= 0 && sec <= (double)ADS_OUID_TIME_MAX))
            return ads_error_set(err, ADS_ERANGE, "_Timestamp is outside the identifier range");
        rc = ads_backfill_next(out, txn->backfill, &txn->idgen, (uint64_t)sec, err);
        if (!rc)
            txn->idgen_dirty = true;
        return rc;
    }
    return new_ordered(txn, out, 1, NULL, err);
}

int ads_seq__type_value(ads_txn *txn, const ads_type *t, double ts, ads_value *out,
                        ads_error *err)
{
    char key[512];
    int n = snprintf(key, sizeof key, "%stype:%s", ADS_META_SEQ_PREFIX, t->folded);
    if (n < 0 || (size_t)n >= sizeof key)
        return ads_error_set(err, ADS_ELIMIT, "type name too long for its sequence");
    ads_id id;
    int rc = one_id(txn, t->method, key, ts, &id, err);
    if (!rc)
        *out = ads_ident(id);
    return rc;
}

/* An OUID given as a key that this store's current generator could make
 * later (its node, the current clock sequence, at or past the last second it
 * issued): the generator moves past it, as if it had issued it, so it never
 * makes it and verify finds no id ahead of the generator. */
static int note_ouid(ads_txn *txn, ads_id id, ads_error *err)
{
    int rc = load_idgen(txn, err);
    if (rc)
        return rc;
    ads_ouid_fields f;
    ads_ouid_unpack(&f, id);
    ads_clock_track *tr = &txn->idgen.current;
    if (f.node != txn->idgen.node || f.version != 1 || f.backfill || !(f.clockseq & 1))
        return 0;
    uint16_t k = (uint16_t)(f.clockseq >> 1);
    if (k == ((tr->k + 1) & ADS_CLOCKSEQ_K_MAX) && tr->used && f.time < tr->hi) {
        /* what the generator makes after the clock steps back: take that
         * step now, as the generator would have */
        tr->k = k;
        tr->lo = tr->hi = f.time;
        tr->last_c = f.counter;
        txn->idgen.steps_back++;
        tr->last_t = tr->hi;
        txn->idgen_dirty = true;
        return 0;
    }
    if (k != tr->k)
        return 0;
    if (!tr->used) {
        tr->used = true;
        tr->lo = tr->hi = f.time;
        tr->last_c = f.counter;
    } else if (f.time > tr->hi) {
        tr->hi = f.time;
        tr->last_c = f.counter;
    } else if (f.time == tr->hi && f.counter > tr->last_c) {
        tr->last_c = f.counter;
    } else {
        return 0; /* behind what the generator issues next: it never goes back */
    }
    tr->last_t = tr->hi;
    txn->idgen_dirty = true;
    return 0;
}

/* A generated key must never equal an existing one. Keys a caller gives
 * (STORE with Id, an import, a bulk load, UPDATE) are taken from the same
 * space as generated increment keys, so the counter is moved past each one:
 * otherwise generation would later walk through every taken value, or, with
 * nothing checking, overwrite the record (do_write checks as well). */
int ads_seq__note_key(ads_txn *txn, const ads_type *t, const ads_value *v, ads_error *err)
{
    if (!t->autogen || v->type != ADS_IDENT)
        return 0;
    if (t->method == ADS_ID_ORDERED && ads_id_kind_of(v->u.id) == ADS_ID_ORDERED)
        return note_ouid(txn, v->u.id, err);
    if (t->method != ADS_ID_INCREMENT || ads_id_kind_of(v->u.id) != ADS_ID_INCREMENT)
        return 0;
    char key[512];
    int n = snprintf(key, sizeof key, "%stype:%s", ADS_META_SEQ_PREFIX, t->folded);
    if (n < 0 || (size_t)n >= sizeof key)
        return ads_error_set(err, ADS_ELIMIT, "type name too long for its sequence");
    seq_cache *c = NULL;
    int rc = ads_seq__cached(&c, txn, key, 8, err);
    if (rc)
        return rc;
    uint64_t have = c->len ? get_le(c->val, 8) : 0;
    if (v->u.id.lo > have) {
        put_le(c->val, v->u.id.lo, 8);
        c->len = 8;
        c->dirty = true;
    }
    return 0;
}

static bool eq_fold(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if ((x >= 'A' && x <= 'Z' ? x | 0x20 : x) != y)
            return false;
    }
    return true;
}

/* A string attribute of a Sequence record: 1 with *out, 0 absent, or an error
 * naming the sequence. */
static int seq_string(ads_str *out, ads_row *row, const char *attr, const char *seqname,
                      ads_error *err)
{
    ads_view view = ads_row_view(row, NULL);
    ads_value v;
    const ads_expr *e = NULL;
    int rc = view.ops->lookup(view.self, attr, strlen(attr), ads_name_hash(attr, strlen(attr)),
                              row->priv.arena, &v, &e);
    if (rc < 0)
        return ads_error_set(err, ADS_ECORRUPT, "sequence %s: its record is corrupt", seqname);
    if (rc == 0)
        return 0;
    if (e && ads_expr_eval(&v, e, &view, row->priv.arena))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (v.type == ADS_UNDEFINED)
        return 0;
    if (v.type != ADS_STRING)
        return ads_error_set(err, ADS_EINVAL, "sequence %s: %s must be a string, not %s",
                             seqname, attr, ads_vtype_name(v.type));
    *out = v.u.s;
    return 1;
}

int ads_txn_next_value(ads_value *out, ads_txn *txn, const char *name, size_t len, ads_arena *a,
                       ads_error *err)
{
    int rc;
    ads_id id;
    if (!txn || !name || !out || !a)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if ((rc = ads_db__need_write(txn, "taking a sequence value", err)))
        return rc;
    if (len == 0)
        return ads_error_set(err, ADS_EINVAL, "a sequence needs a name");
    if (eq_fold(name, len, "random") || eq_fold(name, len, "ordered")) {
        rc = one_id(txn, eq_fold(name, len, "random") ? ADS_ID_RANDOM : ADS_ID_ORDERED, NULL, 0,
                    &id, err);
        if (!rc)
            *out = ads_ident(id);
        return rc;
    }
    if (len > 5 && eq_fold(name, 5, "type:")) {
        const ads_type *t;
        if ((rc = ads_types__by_name(&t, txn, name + 5, len - 5, err))) {
            char why[sizeof err->message] = "unknown type";
            if (err)
                memcpy(why, err->message, sizeof why); /* the message is rewritten below */
            return ads_error_set(err, ADS_ENOTFOUND, "no sequence named %.*s: %s", (int)len,
                                 name, why);
        }
        if (!t->autogen)
            return ads_error_set(err, ADS_ENOTFOUND,
                                 "no sequence named %.*s: type %s does not generate keys",
                                 (int)len, name, t->name);
        return ads_seq__type_value(txn, t, ads_db__now(txn), out, err);
    }
    /* a Sequence record */
    ads_value key = ads_string(name, len);
    ads_row row;
    rc = ads_txn_get(txn, &row, ads_types__builtin(ADS_TYPEID_SEQUENCE), &key, 1, a, err);
    if (rc < 0)
        return rc;
    if (rc == 0 || row.deleted)
        return ads_error_set(err, ADS_ENOTFOUND, "no sequence named %.*s", (int)len, name);
    char seqname[128];
    snprintf(seqname, sizeof seqname, "%.*s", (int)(len > 100 ? 100 : len), name);
    ads_str method = {"increment", 9}, vtype = {"id", 2};
    if ((rc = seq_string(&method, &row, "Method", seqname, err)) < 0 ||
        (rc = seq_string(&vtype, &row, "ValueType", seqname, err)) < 0)
        return rc;
    ads_id_kind kind;
    if (eq_fold(method.p, method.len, "increment"))
        kind = ADS_ID_INCREMENT;
    else if (eq_fold(method.p, method.len, "ordered"))
        kind = ADS_ID_ORDERED;
    else if (eq_fold(method.p, method.len, "random"))
        kind = ADS_ID_RANDOM;
    else
        return ads_error_set(err, ADS_EINVAL,
                             "sequence %s: Method \"%.*s\" is not ordered, random or increment",
                             seqname, (int)(method.len > 40 ? 40 : method.len), method.p);
    int vt;
    if (eq_fold(vtype.p, vtype.len, "id"))
        vt = 0;
    else if (eq_fold(vtype.p, vtype.len, "string"))
        vt = 1;
    else if (eq_fold(vtype.p, vtype.len, "integer"))
        vt = 2;
    else
        return ads_error_set(err, ADS_EINVAL,
                             "sequence %s: ValueType \"%.*s\" is not id, string or integer",
                             seqname, (int)(vtype.len > 40 ? 40 : vtype.len), vtype.p);
    if (vt == 2 && kind != ADS_ID_INCREMENT)
        return ads_error_set(err, ADS_EINVAL,
                             "sequence %s: ValueType integer needs Method increment", seqname);
    char ckey[512];
    char *folded = ads_db__fold(txn, name, len);
    if (!folded)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int n = snprintf(ckey, sizeof ckey, "%s%s", ADS_META_SEQ_PREFIX, folded);
    if (n < 0 || (size_t)n >= sizeof ckey)
        return ads_error_set(err, ADS_ELIMIT, "sequence name too long");
    if ((rc = one_id(txn, kind, ckey, ads_db__now(txn), &id, err)))
        return rc;
    if (vt == 2) {
        if (id.lo > INT64_MAX)
            return ads_error_set(err, ADS_ERANGE, "sequence %s passed the integer range", seqname);
        *out = ads_int((int64_t)id.lo);
    } else if (vt == 1) {
        char text[ADS_ID_TEXT_MAX + 1];
        size_t tl = ads_id_format(text, id);
        if ((rc = ads_string_copy(out, a, text + 1, tl - 1)))
            return ads_error_set(err, rc, "out of memory");
    } else {
        *out = ads_ident(id);
    }
    return 0;
}

int ads_txn_sequence_last(uint64_t *out, ads_txn *txn, const char *name, size_t len, ads_error *err)
{
    char key[512];
    *out = 0;
    if (!name || len == 0 || len > 400)
        return ads_error_set(err, ADS_EINVAL, "a sequence name of 1 to 400 bytes");
    size_t p = strlen(ADS_META_SEQ_PREFIX);
    memcpy(key, ADS_META_SEQ_PREFIX, p);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        key[p + i] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
    }
    key[p + len] = 0;
    seq_cache *c = find_cached(txn, key);
    if (c) {
        *out = c->len == 8 ? get_le(c->val, 8) : 0;
        return 0;
    }
    MDB_val v;
    int rc = ads_db__meta_get(txn, key, p + len, &v, err);
    if (rc < 0)
        return rc;
    if (rc == 1) {
        if (v.mv_size != 8)
            return ads_error_set(err, ADS_ECORRUPT, "store metadata '%s' is corrupt", key);
        *out = get_le(v.mv_data, 8);
    }
    return 0;
}
