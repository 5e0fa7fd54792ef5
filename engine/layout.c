/*
 * engine/layout.c: how the rows of a table lie in the store's file (how
 * full its leaf pages are, and whether they follow each other in key
 * order), from a sample of its entries: what tells `adstore import` and
 * `adstore stats` that compaction would make scans faster.
 *
 * A read transaction's keys point into LMDB's map, inside the leaf page
 * that holds them, and the map starts on a page boundary, so the key's
 * address over the page size numbers its page: consecutive numbers are
 * consecutive pages of the file. No private LMDB structure is read. An entry takes its
 * key, its value (or, for a value on overflow pages, the page number) and
 * LMDB's node header (8 bytes, padded to an even size) plus a 2-byte
 * pointer in its page; a leaf page's room is the page less its 16-byte
 * header.
 */
#include <stdint.h>
#include <string.h>

#include "base/limits.h"
#include "engine/engine_int.h"

#define NODE_HEADER 8
#define PAGE_HEADER 16
#define NODE_POINTER 2
#define FORWARD_PAGES 4 /* a step to a page at most this far on reads on */

static size_t node_bytes(size_t ksize, size_t vsize, size_t psize)
{
    size_t v = vsize;
    if (NODE_HEADER + ksize + vsize > (psize - PAGE_HEADER) / 2)
        v = sizeof(uint64_t); /* on overflow pages: the node holds their number */
    return ((NODE_HEADER + ksize + v + 1) & ~(size_t)1) + NODE_POINTER;
}

static int table_layout(ads_table_layout *out, MDB_txn *txn, MDB_dbi dbi, size_t psize,
                        ads_error *err)
{
    memset(out, 0, sizeof *out);
    MDB_cursor *c;
    int rc = mdb_cursor_open(txn, dbi, &c);
    if (rc)
        return ads_error_set(err, ADS_ESTORAGE, "reading the layout: %s", mdb_strerror(rc));
    MDB_val k, v;
    uint64_t bytes = 0, steps = 0, forward = 0;
    size_t last = SIZE_MAX;
    while (out->entries < ADS_LAYOUT_SAMPLE && (rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
        size_t page = (size_t)((uintptr_t)k.mv_data / psize);
        out->entries++;
        bytes += node_bytes(k.mv_size, v.mv_size, psize);
        if (page != last) {
            out->leaf_pages++;
            if (last != SIZE_MAX) {
                steps++;
                forward += page > last && page - last <= FORWARD_PAGES;
            }
            last = page;
        }
    }
    mdb_cursor_close(c);
    if (rc && rc != MDB_NOTFOUND)
        return ads_error_set(err, ADS_ESTORAGE, "reading the layout: %s", mdb_strerror(rc));
    uint64_t pages = out->leaf_pages;
    out->fill = pages ? (double)bytes / ((double)pages * (double)(psize - PAGE_HEADER)) : 1.0;
    if (out->fill > 1.0)
        out->fill = 1.0;
    out->in_order = steps ? (double)forward / (double)steps : 1.0;
    return 0;
}

int ads_db_layout_get(ads_db_layout *out, ads_db *db, ads_error *err)
{
    if (!out || !db)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    MDB_stat st;
    int rc;
    if ((rc = mdb_env_stat(db->env, &st)))
        return ads_error_set(err, ADS_ESTORAGE, "reading the layout: %s", mdb_strerror(rc));
    ads_txn *t;
    if ((rc = ads_txn_begin(&t, db, ADS_TXN_READONLY, err)))
        return rc;
    rc = table_layout(&out->latest, t->txn, db->latest, st.ms_psize, err);
    if (!rc)
        rc = table_layout(&out->history, t->txn, db->history, st.ms_psize, err);
    ads_txn_abort(t);
    return rc;
}

bool ads_table_layout_scattered(const ads_table_layout *t)
{
    return t->leaf_pages >= ADS_LAYOUT_MIN_PAGES &&
           (t->fill < ADS_LAYOUT_FILL_MIN || t->in_order < ADS_LAYOUT_ORDER_MIN);
}
