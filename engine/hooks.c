/*
 * engine/hooks.c: the three hook points per type (shared/spec/datastore.md
 * section 6). The store keeps a table of hooks by folded type name; type
 * information built from Type records carries a copy, so a write finds its
 * hooks without a look-up. Changes to types with a notify hook are noted in
 * the transaction (key values copied into the transaction's change arena)
 * and delivered after the commit, in batches.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

#define NOTIFY_BATCH 1024

static char *fold_dup(const char *s)
{
    size_t n = strlen(s);
    char *f = malloc(n + 1);
    if (!f)
        return NULL;
    for (size_t i = 0; i <= n; i++) {
        unsigned char c = (unsigned char)s[i];
        f[i] = (char)((c >= 'A' && c <= 'Z') ? c | 0x20 : c);
    }
    return f;
}

int ads_db_set_hooks(ads_db *db, const char *type, const ads_hooks *hooks, ads_error *err)
{
    if (!db || !type || !*type)
        return ads_error_set(err, ADS_EINVAL, "hooks need a store and a type name");
    char *f = fold_dup(type);
    if (!f)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    pthread_mutex_lock(&db->lock);
    if (db->open_txns) {
        /* their type information points into the caches dropped below */
        size_t n = db->open_txns;
        pthread_mutex_unlock(&db->lock);
        free(f);
        return ads_error_set(err, ADS_EBUSY,
                             "hooks cannot change while transactions are open (%zu open): end "
                             "them first",
                             n);
    }
    size_t i;
    for (i = 0; i < db->nhooks; i++)
        if (strcmp(db->hooks[i].folded, f) == 0)
            break;
    int rc = 0;
    if (!hooks || (!hooks->prestore && !hooks->trigger && !hooks->notify)) {
        if (i < db->nhooks) {
            free(db->hooks[i].folded);
            db->hooks[i] = db->hooks[--db->nhooks];
        }
        free(f);
    } else if (i < db->nhooks) {
        db->hooks[i].hooks = *hooks;
        free(f);
    } else {
        hook_entry *more = realloc(db->hooks, (db->nhooks + 1) * sizeof *more);
        if (!more) {
            free(f);
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        } else {
            db->hooks = more;
            db->hooks[db->nhooks].folded = f;
            db->hooks[db->nhooks].hooks = *hooks;
            db->nhooks++;
        }
    }
    /* cached type information holds copies: drop it */
    if (!rc)
        ads_types__free_all(db);
    pthread_mutex_unlock(&db->lock);
    return rc;
}

void ads_hooks__attach(ads_db *db, ads_type *t)
{
    for (size_t i = 0; i < db->nhooks; i++)
        if (strcmp(db->hooks[i].folded, t->folded) == 0) {
            t->hooks = db->hooks[i].hooks;
            t->has_hooks = true;
            return;
        }
    t->has_hooks = false;
}

int ads_hooks__note(ads_txn *txn, const ads_type *t, ads_change_kind kind,
                    const unsigned char *data, size_t len, double ts, int64_t systs,
                    bool latest, ads_error *err)
{
    if (!txn->change_arena && !(txn->change_arena = ads_arena_new()))
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    if (txn->nchanges == txn->capchanges) {
        size_t cap = txn->capchanges ? 2 * txn->capchanges : 64;
        ads_change *more = realloc(txn->changes, cap * sizeof *more);
        if (!more)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        txn->changes = more;
        txn->capchanges = cap;
    }
    ads_row row;
    row_env env = {0, ts, 0, systs, NULL, 0, data, len, 0};
    ads_row__fill(&row, txn, t, NULL, 0, &env, latest, txn->change_arena);
    ads_change *c = &txn->changes[txn->nchanges];
    int rc = ads_row_key_values(&c->key, &row, txn->change_arena, err);
    if (rc)
        return rc;
    c->type = ads_arena_strndup(txn->change_arena, t->name, strlen(t->name));
    if (!c->type)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    c->kind = kind;
    c->ts = ts;
    c->systime_us = systs;
    c->latest = latest;
    txn->nchanges++;
    return 0;
}

void ads_hooks__deliver(ads_txn *txn)
{
    ads_db *db = txn->db;
    size_t i = 0;
    while (i < txn->nchanges) {
        /* a run of changes of one type, at most NOTIFY_BATCH long */
        size_t j = i + 1;
        while (j < txn->nchanges && j - i < NOTIFY_BATCH &&
               strcmp(txn->changes[j].type, txn->changes[i].type) == 0)
            j++;
        char *f = fold_dup(txn->changes[i].type);
        ads_hooks h = {NULL, NULL, NULL, NULL};
        pthread_mutex_lock(&db->lock);
        for (size_t k = 0; f && k < db->nhooks; k++)
            if (strcmp(db->hooks[k].folded, f) == 0)
                h = db->hooks[k].hooks;
        pthread_mutex_unlock(&db->lock);
        free(f);
        if (h.notify)
            h.notify(h.ctx, &txn->changes[i], j - i);
        i = j;
    }
    txn->nchanges = 0;
}
