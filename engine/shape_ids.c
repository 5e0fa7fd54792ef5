/*
 * engine/shape_ids.c: giving the shapes an encoder remembers their
 * attribute ids, so that its later records are encoded keyed by ids (a bulk
 * load's, engine/bulk.c; a sorted load's stage, engine/stage.c).
 *
 * The encoder's memo keeps the names of the last record of each attribute
 * count modulo ADS_MSGPACK_ORDER_SHAPES (a slot). A write transaction
 * looks up (or, for a stage, adds) the ids of a slot's names; once that
 * transaction has committed the ids are the store's for good (names.c) and
 * are handed to the memo and to the store handle (db->bulk_shapes, which
 * seeds the loads after it). Until then an id new in the transaction may be
 * handed out again, to another name, should it abort.
 *
 * Only names a write takes as they are may be keyed by ids: those
 * store.c's look_over lets through (no "__" name, none over the length
 * limit), and of the timeline attributes only _Timestamp and _Deleted, as
 * spelled here, keyed by ADS_NAMES_GIVEN_TIMELINE + which (rows read
 * through txn->given_nm name them back).
 */
#include <string.h>

#include "engine/engine_int.h"

/* Whether name may be keyed by an id in a row given to a write, and the
 * id it has when it is a timeline attribute (else UINT64_MAX). */
static bool may_key(const ads_str *name, uint64_t *given_id)
{
    int which = ads_row__timeline_attr(name->p, name->len);
    if (which == 1 || which == 4) {
        /* spelled as given_nm spells it, so that a hook reading the row
         * with names sees the record's own spelling */
        const char *canon = which == 1 ? ads_attr__timestamp : ads_attr__deleted;
        *given_id = ADS_NAMES_GIVEN_TIMELINE + (uint64_t)which;
        return memcmp(name->p, canon, name->len) == 0;
    }
    *given_id = UINT64_MAX;
    return !which && name->len <= ADS_MAX_NAME_LEN && !(name->len >= 2 && name->p[0] == '_' &&
                                                        name->p[1] == '_');
}

/* The id of name in txn: 0 with *found and *id; adding one when add. */
static int id_of(ads_txn *txn, size_t i, const ads_str *name, bool add, bool *found,
                 uint64_t *id, ads_error *err)
{
    if (add) {
        int rc = ads_names__id(txn, i, name->p, name->len, id, err);
        *found = rc == 0;
        return rc == 1 ? 0 : rc; /* 1: the table is full, or the store has none */
    }
    uint32_t small = 0;
    int rc = ads_names__known(txn, name->p, name->len, found, &small, err);
    *id = small;
    return rc;
}

/* Slot's names and their ids into l when every one may be keyed and has
 * an id (or is given one): 1, 0 when not, or an error. */
static int learn_slot(ads_learnt *l, const ads_msgpack_order *memo, unsigned slot, ads_txn *txn,
                      bool add, ads_error *err)
{
    ads_str names[ADS_NAMES_SHAPE_MAX];
    bool with_ids = false;
    size_t n = ads_msgpack__memo_shape(memo, slot, names, ADS_NAMES_SHAPE_MAX, &with_ids);
    if (n == 0 || with_ids)
        return 0;
    /* every name first: a shape that cannot be keyed adds no name (its
     * record may be refused, and a refused record changes nothing) */
    for (size_t k = 0; k < n; k++)
        if (!may_key(&names[k], &l->ids[k]))
            return 0;
    uint64_t h = ads_attrs__sig_start(n);
    for (size_t k = 0; k < n; k++) {
        bool found = true;
        int rc;
        if (l->ids[k] == UINT64_MAX &&
            (rc = id_of(txn, k, &names[k], add, &found, &l->ids[k], err)))
            return rc;
        if (!found)
            return 0;
        h = ads_attrs__sig_add(h, names[k].p, names[k].len);
    }
    l->n = n;
    l->sig = ads_attrs__sig_end(h);
    return 1;
}

int ads_shape_ids__learn(ads_learnt *learnt, const ads_msgpack_order *memo, ads_txn *txn,
                         bool add, ads_error *err)
{
    int rc = 0;
    for (unsigned slot = 0; slot < ADS_MSGPACK_ORDER_SHAPES && rc >= 0; slot++) {
        learnt[slot].n = 0;
        rc = learn_slot(&learnt[slot], memo, slot, txn, add, err);
    }
    if (rc < 0)
        for (unsigned slot = 0; slot < ADS_MSGPACK_ORDER_SHAPES; slot++)
            learnt[slot].n = 0;
    return rc < 0 ? rc : 0;
}

bool ads_shape_ids__hand_over(ads_db *db, ads_msgpack_order *memo, const ads_learnt *learnt)
{
    bool any = false;
    for (unsigned slot = 0; slot < ADS_MSGPACK_ORDER_SHAPES; slot++) {
        const ads_learnt *l = &learnt[slot];
        if (l->n) {
            ads_msgpack__memo_set_ids(memo, slot, l->n, l->ids, l->sig);
            any = true;
        }
    }
    if (!any)
        return false;
    pthread_mutex_lock(&db->lock);
    if (db->bulk_shapes || ads_msgpack_order_new(&db->bulk_shapes, NULL) == 0)
        ads_msgpack__memo_copy_ids(db->bulk_shapes, memo);
    pthread_mutex_unlock(&db->lock);
    return true;
}

void ads_shape_ids__seed(ads_db *db, ads_msgpack_order *memo)
{
    pthread_mutex_lock(&db->lock);
    if (db->bulk_shapes)
        ads_msgpack__memo_copy_ids(memo, db->bulk_shapes);
    pthread_mutex_unlock(&db->lock);
}
