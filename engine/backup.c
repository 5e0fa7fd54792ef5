/*
 * engine/backup.c: a consistent copy of a live store (shared/spec/tools.md;
 * docs/tools.md, "Backup") through LMDB's compacting copy, taken in one read
 * transaction while writers go on.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/dump_int.h"

int ads_db_backup(ads_db *db, const char *dir, ads_error *err)
{
    if (!db || !dir || !*dir)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    bool exists;
    int rc = ads_dump__check_target(dir, &exists, err);
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

