/*
 * engine/dump_check.c: checking a row before a dump writes it or a restore
 * stores it (docs/formats.md, "Dump format"): its key long enough to name
 * a type, its envelope and checksum, its MessagePack row, and whole (a
 * store's history rows kept as differences are made whole by the dump;
 * a dump never holds one). A bad row is named by its type and key.
 */
#include <stdio.h>
#include <string.h>

#include "engine/dump_int.h"

void ads_dump__row_name(char *out, size_t cap, ads_txn *txn, const unsigned char *key,
                        size_t len, ads_arena *a)
{
    if (len < 4) {
        snprintf(out, cap, "a key of %zu bytes", len);
        return;
    }
    char tn[32];
    const char *tname = tn;
    const ads_type *t;
    ads_error quiet;
    uint32_t id = ads_key__get_typeid(key);
    if (ads_types__by_id(&t, txn, id, &quiet) == 0)
        tname = t->name;
    else
        snprintf(tn, sizeof tn, "type id %u", (unsigned)id);
    char kt[ADS_ERROR_MESSAGE_MAX];
    ads_key__text(kt, sizeof kt, key, len, a);
    snprintf(out, cap, "type %s, key %s", tname, kt);
}

/* "type T, key K: <pre><message>" in why: ADS_ECORRUPT. A long key's full
 * form is in the row, which cannot be trusted: the record is named by the
 * key as stored (len bytes, without a history key's dates). */
static int bad_row(char *why, size_t cap, ads_txn *txn, const unsigned char *key, size_t len,
                   const char *pre, const char *message, ads_arena *a)
{
    char name[400];
    ads_dump__row_name(name, sizeof name, txn, key, len, a);
    snprintf(why, cap, "%s: %s%s", name, pre, message);
    return ADS_ECORRUPT;
}

int ads_dump__check_row(ads_txn *txn, const unsigned char *key, size_t klen,
                        const unsigned char *val, size_t vlen, bool latest, row_env *env,
                        ads_arena *a, char *why, size_t cap)
{
    const char *what = latest ? "latest row" : "history row";
    size_t min = latest ? 5 : 5 + 16;
    ads_error e;
    const char *pre = ""; /* ads_row__parse names the row itself */
    if (klen < min) {
        snprintf(e.message, sizeof e.message, "%s: a key of %zu bytes", what, klen);
    } else if (ads_row__parse(env, key, klen, val, vlen, what, &e) == 0) {
        /* a dump holds whole rows (a store's differences are made whole) */
        if (env->flags & ROW_DELTA)
            snprintf(e.message, sizeof e.message, "kept as a difference, not whole");
        else if (ads_msgpack__check_row(env->data, env->len, ads_txn__names(txn), &e) == 0)
            return 0;
        pre = latest ? "latest row: " : "history row: ";
    }
    return bad_row(why, cap, txn, key, latest || klen < min ? klen : klen - 16, pre, e.message,
                   a);
}

int ads_dump__check_made(ads_txn *txn, const unsigned char *key, size_t klen,
                         const row_env *env, ads_arena *a, char *why, size_t cap)
{
    ads_error e;
    if (ads_msgpack__check_row(env->data, env->len, ads_txn__names(txn), &e) == 0)
        return 0;
    return bad_row(why, cap, txn, key, klen - 16, "history row: ", e.message, a);
}

int ads_dump__check_envelope(ads_txn *txn, const unsigned char *key, size_t klen,
                             const unsigned char *val, size_t vlen, bool latest, ads_arena *a,
                             char *why, size_t cap)
{
    if (vlen >= 5 && val[4] == ADS_ROW_VERSION_DUMP)
        return 0;
    char name[400];
    ads_dump__row_name(name, sizeof name, txn, key, latest ? klen : klen - 16, a);
    snprintf(why, cap, "%s: %s: a row of envelope version %u (a dump's rows have version %d)",
             name, latest ? "latest row" : "history row", vlen >= 5 ? val[4] : 0,
             ADS_ROW_VERSION_DUMP);
    return ADS_ECORRUPT;
}
