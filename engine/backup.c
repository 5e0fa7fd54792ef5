/*
 * engine/backup.c: a consistent copy of a live store (shared/spec/tools.md;
 * docs/tools.md, "Backup") through LMDB's compacting copy, taken in one read
 * transaction while writers go on.
 *
 * The copy is built in DIR.backup-PID beside the target, synced, verified
 * (the whole of engine/verify.c's checks, so a corrupt row is never carried
 * into a backup), and only then renamed into place and the rename synced: a
 * kill or a crash at any moment leaves the target absent or whole, never
 * half a store. What a killed backup left is swept by the next backup or
 * restore of the same target.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/dump_int.h"

/* What checking the copy reports to: the first problem, and the caller's
 * progress. */
typedef struct check_ctx {
    char first[200];
    ads_progress_fn progress;
    void *ctx;
} check_ctx;

static void check_problem(void *ctx, const char *problem)
{
    check_ctx *cc = ctx;
    if (!cc->first[0])
        snprintf(cc->first, sizeof cc->first, "%s", problem);
}

static void check_progress(void *ctx, uint64_t done, uint64_t total)
{
    check_ctx *cc = ctx;
    if (cc->progress)
        cc->progress(cc->ctx, done, total);
}

/* Verify the copy in tmp: 0, or ADS_ECORRUPT with the first problem. */
static int check_copy(const char *tmp, ads_progress_fn progress, void *ctx, ads_error *err)
{
    ads_db *copy;
    int rc = ads_db_open(&copy, tmp, ADS_DB_READONLY, err);
    if (rc)
        return rc;
    check_ctx cc = {"", progress, ctx};
    ads_verify_result vr;
    rc = ads_db_verify_ex(&vr, copy, check_problem, check_progress, &cc, err);
    ads_db_close(copy);
    if (!rc && vr.problems)
        rc = ads_error_set(err, ADS_ECORRUPT,
                           "the copy fails its check with %llu problem%s (the first: %s); "
                           "nothing is copied: 'adstore verify' lists them in the store",
                           (unsigned long long)vr.problems, vr.problems == 1 ? "" : "s",
                           cc.first);
    return rc;
}

int ads_db_backup_ex(ads_db *db, const char *dir, ads_progress_fn progress, void *ctx,
                     ads_error *err)
{
    if (!db || !dir || !*dir)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    if (strlen(dir) > 4000)
        return ads_error_set(err, ADS_EINVAL, "the backup directory name is too long");
    bool exists;
    int rc = ads_dump__check_target(dir, &exists, err);
    if (rc)
        return rc;
    char tmp[4200], path[4300];
    snprintf(tmp, sizeof tmp, "%s.backup-%ld", dir, (long)getpid());
    ads_dump__sweep(dir);
    ads_dump__remove_store_dir(tmp);
    if (mkdir(tmp, 0700) != 0)
        return ads_error_set(err, ADS_EIO, "cannot create %s: %s", tmp, strerror(errno));
    snprintf(path, sizeof path, "%s/data.mdb", tmp);
    /* LMDB's compacting copy: a consistent snapshot through a read
     * transaction, free pages left out; writers go on meanwhile */
    pthread_rwlock_rdlock(&db->resize);
    rc = mdb_env_copy2(db->env, tmp, MDB_CP_COMPACT);
    pthread_rwlock_unlock(&db->resize);
    if (rc) {
        rc = ads_error_set(err, rc == ENOSPC || rc == EIO ? ADS_EIO : ADS_ESTORAGE,
                           "copying the store: %s", mdb_strerror(rc));
        goto fail;
    }
    if (chmod(path, 0600) != 0) {
        rc = ads_error_set(err, ADS_EIO, "cannot set the mode of %s: %s", path,
                           strerror(errno));
        goto fail;
    }
    if ((rc = ads_dump__sync_path(path, err)) ||
        (rc = check_copy(tmp, progress, ctx, err)) ||
        (rc = ads_dump__into_place(tmp, dir, exists, err)))
        goto fail;
    return 0;
fail:
    ads_dump__remove_store_dir(tmp);
    return rc;
}

int ads_db_backup(ads_db *db, const char *dir, ads_error *err)
{
    return ads_db_backup_ex(db, dir, NULL, NULL, err);
}
