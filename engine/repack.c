/*
 * engine/repack.c: copying a store's data file into a new one whose pages
 * are full and in key order (the copy `adstore compact` swaps in).
 *
 * LMDB's own compacting copy (mdb_env_copy2 with MDB_CP_COMPACT) leaves out
 * free pages but keeps every leaf page as full as it was: a tree that grew by
 * inserts in no particular order (an import of unsorted keys, the history of
 * records written one by one) has leaves about half full, and stays so. Here
 * every table is read in key order and written into an empty environment
 * with MDB_APPEND, so each leaf is filled before the next is started and the
 * pages lie in the file in key order: the smallest file, and a scan reads it
 * front to back.
 *
 * The tables are found in the source's main table (LMDB keeps one entry per
 * named table there); adstore's tables use LMDB's default key order and no
 * duplicates, which the copy checks. The destination is written without
 * locks or syncs (it is ours alone until the caller syncs and renames it);
 * its write transactions are committed every ADS_REPACK_TXN_BYTES so dirty
 * pages stay bounded, and the source's pages read so far are dropped from
 * the process then (the read-only map reads them again from the file if
 * needed), so its resident set stays bounded too. The caller syncs the
 * file.
 */
#include <errno.h>
#include <string.h>

#include "base/limits.h"
#include "engine/engine_int.h"

typedef struct repack {
    MDB_env *src, *dst;
    MDB_txn *rtxn, *wtxn;
    size_t pending; /* bytes put in wtxn */
} repack;

static int lmdb_error(ads_error *err, int rc, const char *what, const char *name)
{
    return ads_error_set(err, rc == ENOSPC || rc == MDB_MAP_FULL ? ADS_EIO : ADS_ESTORAGE,
                         "compact: %s%s%s: %s", what, name ? " " : "", name ? name : "",
                         mdb_strerror(rc));
}

static int next_wtxn(repack *p, ads_error *err)
{
    int rc;
    if (p->wtxn && (rc = mdb_txn_commit(p->wtxn))) {
        p->wtxn = NULL;
        return lmdb_error(err, rc, "writing the copy", NULL);
    }
    p->wtxn = NULL;
    p->pending = 0;
    if ((rc = mdb_txn_begin(p->dst, NULL, 0, &p->wtxn)))
        return lmdb_error(err, rc, "writing the copy", NULL);
    return 0;
}

/* Copy the table called name, in key order, appending. */
static int copy_table(repack *p, const char *name, ads_error *err)
{
    MDB_dbi s, d;
    unsigned flags;
    int rc;
    if ((rc = mdb_dbi_open(p->rtxn, name, 0, &s)) || (rc = mdb_dbi_flags(p->rtxn, s, &flags)))
        return lmdb_error(err, rc, "opening table", name);
    if (flags & (MDB_DUPSORT | MDB_REVERSEKEY | MDB_INTEGERKEY))
        return ads_error_set(err, ADS_ECORRUPT, "compact: table %s has flags %#x, not adstore's",
                             name, flags);
    if ((rc = mdb_dbi_open(p->wtxn, name, MDB_CREATE, &d)))
        return lmdb_error(err, rc, "creating table", name);
    MDB_cursor *c;
    if ((rc = mdb_cursor_open(p->rtxn, s, &c)))
        return lmdb_error(err, rc, "reading table", name);
    MDB_val k, v;
    int mrc = 0;
    rc = 0;
    while (!rc && (mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
        if ((mrc = mdb_put(p->wtxn, d, &k, &v, MDB_APPEND)))
            break;
        p->pending += k.mv_size + v.mv_size;
        if (p->pending >= ADS_REPACK_TXN_BYTES) {
            rc = next_wtxn(p, err);
            ads_db__drop_env_pages(p->src); /* (k and v are used up) */
        }
    }
    mdb_cursor_close(c);
    if (!rc && mrc != MDB_NOTFOUND)
        rc = lmdb_error(err, mrc, "copying table", name);
    return rc;
}

/* The names of the source's tables, from its main table. */
static int copy_tables(repack *p, ads_error *err)
{
    MDB_dbi root;
    MDB_cursor *c;
    int rc;
    if ((rc = mdb_dbi_open(p->rtxn, NULL, 0, &root)) || (rc = mdb_cursor_open(p->rtxn, root, &c)))
        return lmdb_error(err, rc, "reading the table list", NULL);
    MDB_val k, v;
    char name[ADS_REPACK_NAME_MAX + 1];
    int mrc = 0;
    rc = 0;
    while (!rc && (mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
        if (k.mv_size == 0 || k.mv_size > ADS_REPACK_NAME_MAX ||
            memchr(k.mv_data, 0, k.mv_size)) {
            rc = ads_error_set(err, ADS_ECORRUPT,
                               "compact: the main table holds a key that names no table");
            break;
        }
        memcpy(name, k.mv_data, k.mv_size);
        name[k.mv_size] = 0;
        rc = copy_table(p, name, err);
    }
    mdb_cursor_close(c);
    if (!rc && mrc != MDB_NOTFOUND)
        rc = lmdb_error(err, mrc, "reading the table list", NULL);
    return rc;
}

static int open_envs(repack *p, const char *dir, const char *tmp, ads_error *err)
{
    int rc;
    MDB_envinfo info;
    if ((rc = mdb_env_create(&p->src)) || (rc = mdb_env_set_maxdbs(p->src, ADS_REPACK_TABLES)) ||
        (rc = mdb_env_open(p->src, dir, MDB_RDONLY | MDB_NOLOCK, 0600)) ||
        (rc = mdb_env_info(p->src, &info)))
        return lmdb_error(err, rc, "opening", dir);
    if ((rc = mdb_env_create(&p->dst)) || (rc = mdb_env_set_maxdbs(p->dst, ADS_REPACK_TABLES)) ||
        (rc = mdb_env_set_mapsize(p->dst, info.me_mapsize)) ||
        (rc = mdb_env_open(p->dst, tmp, MDB_NOLOCK | MDB_NOSYNC, 0600)))
        return lmdb_error(err, rc, "creating the copy in", tmp);
    if ((rc = mdb_txn_begin(p->src, NULL, MDB_RDONLY, &p->rtxn)))
        return lmdb_error(err, rc, "reading", dir);
    return next_wtxn(p, err);
}

int ads_db__repack(const char *dir, const char *tmp, ads_error *err)
{
    repack p;
    memset(&p, 0, sizeof p);
    int rc = open_envs(&p, dir, tmp, err);
    if (!rc)
        rc = copy_tables(&p, err);
    if (!rc && (rc = mdb_txn_commit(p.wtxn)))
        rc = lmdb_error(err, rc, "writing the copy", NULL);
    else if (rc && p.wtxn)
        mdb_txn_abort(p.wtxn);
    p.wtxn = NULL;
    if (p.rtxn)
        mdb_txn_abort(p.rtxn);
    if (p.dst)
        mdb_env_close(p.dst);
    if (p.src)
        mdb_env_close(p.src);
    return rc;
}
