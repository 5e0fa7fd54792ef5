/*
 * engine/compact.c: rewriting a store in place into the smallest file
 * (adstore compact).
 *
 * Every process that has an LMDB environment open holds a shared fcntl lock
 * on byte 0 of its lock file, and one opening it tries an exclusive lock
 * there first, then waits for a shared one (LMDB's mdb_env_excl_lock). So:
 *   1. retention is applied (ads_db_apply_retention) through an ordinary
 *      open;
 *   2. an exclusive lock on byte 0 of DIR/lock.mdb, taken without waiting,
 *      proves that no other process has the store open, and makes any
 *      process that opens it meanwhile wait;
 *   3. every table is copied in key order, with full pages, into
 *      DIR.compact-PID beside DIR (engine/repack.c: the store read through
 *      an environment opened with MDB_NOLOCK, since opening it with locks in
 *      this process would give up the exclusive lock), synced, and checked
 *      as ads_db_verify checks a store;
 *   4. the copy's data.mdb is renamed over DIR/data.mdb (one atomic step:
 *      a crash before it leaves the old store, after it the new one) and
 *      DIR is synced;
 *   5. the store is opened once more in this process: holding the exclusive
 *      lock, LMDB takes it for the first opener and sets up the lock file
 *      for the new data file; only then may waiting processes go on.
 * What a killed compaction left beside DIR is removed first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_int.h"

static int sys_error(ads_error *err, const char *what, const char *path)
{
    return ads_error_set(err, ADS_EIO, "%s %s: %s", what, path, strerror(errno));
}

static int fsync_path(const char *path, ads_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return sys_error(err, "cannot open", path);
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc ? sys_error(err, "cannot sync", path) : 0;
}

/* Remove directory path and the files in it (one level: a store). */
static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    char f[4200];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(f, sizeof f, "%s/%s", path, e->d_name);
            unlink(f);
        }
    closedir(d);
    rmdir(path);
}

/* Remove DIR.compact-* left by compactions that were killed (their process
 * gone: a live one would hold the store's lock, so none can be running). */
static void sweep(const char *dir)
{
    char parent[4096], prefix[4096];
    const char *slash = strrchr(dir, '/');
    if (slash) {
        snprintf(parent, sizeof parent, "%.*s", (int)(slash > dir ? slash - dir : 1), dir);
        snprintf(prefix, sizeof prefix, "%s.compact-", slash + 1);
    } else {
        snprintf(parent, sizeof parent, ".");
        snprintf(prefix, sizeof prefix, "%s.compact-", dir);
    }
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    size_t n = strlen(prefix);
    char path[8400];
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, n) == 0) {
            snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
            remove_dir(path);
        }
    closedir(d);
}

/* Take the exclusive lock on byte 0 of the lock file: 0, or ADS_EBUSY
 * naming the process that has the store open, after waiting up to wait
 * seconds. */
static int lock_store(int fd, const char *dir, double wait, ads_error *err)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct flock l;
        memset(&l, 0, sizeof l);
        l.l_type = F_WRLCK;
        l.l_whence = SEEK_SET;
        l.l_start = 0;
        l.l_len = 1;
        if (fcntl(fd, F_SETLK, &l) == 0)
            return 0;
        if (errno != EAGAIN && errno != EACCES && errno != EINTR)
            return sys_error(err, "cannot lock", dir);
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - start.tv_sec) +
                        (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        if (waited >= wait) {
            memset(&l, 0, sizeof l);
            l.l_type = F_WRLCK;
            l.l_whence = SEEK_SET;
            l.l_start = 0;
            l.l_len = 1;
            long pid = fcntl(fd, F_GETLK, &l) == 0 && l.l_type != F_UNLCK ? (long)l.l_pid : 0;
            char who[48] = "another process";
            if (pid > 0)
                snprintf(who, sizeof who, "another process (pid %ld)", pid);
            if (wait > 0)
                return ads_error_set(err, ADS_EBUSY,
                                     "%s has the store %s open, still after %g s: compact needs it "
                                     "to itself",
                                     who, dir, wait);
            return ads_error_set(err, ADS_EBUSY,
                                 "%s has the store %s open: compact needs it to itself (stop "
                                 "it, or wait for it with --wait SECONDS)",
                                 who, dir);
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void count_problem(void *ctx, const char *problem)
{
    char *first = ctx;
    if (!*first)
        snprintf(first, 512, "%s", problem);
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : 0;
}

int ads_db_space_get(ads_db_space *out, ads_db *db, ads_error *err)
{
    if (!db || !out)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    memset(out, 0, sizeof *out);
    MDB_envinfo info;
    MDB_stat st;
    int rc;
    if ((rc = mdb_env_info(db->env, &info)) || (rc = mdb_env_stat(db->env, &st)))
        return ads_error_set(err, ADS_ESTORAGE, "reading store figures: %s", mdb_strerror(rc));
    out->page_size = st.ms_psize;
    out->used_pages = (uint64_t)info.me_last_pgno + 1;
    mdb_filehandle_t fd;
    struct stat fs;
    if (mdb_env_get_fd(db->env, &fd) == 0 && fstat(fd, &fs) == 0)
        out->file_bytes = (uint64_t)fs.st_size;
    /* the free list (LMDB's table 0): each entry a list of page numbers,
     * its first word their count */
    ads_txn *t;
    if ((rc = ads_txn_begin(&t, db, ADS_TXN_READONLY, err)))
        return rc;
    MDB_cursor *c;
    MDB_val k, v;
    if ((rc = mdb_cursor_open(t->txn, 0, &c))) {
        ads_txn_abort(t);
        return ads_error_set(err, ADS_ESTORAGE, "reading the free list: %s", mdb_strerror(rc));
    }
    while ((rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0)
        if (v.mv_size >= sizeof(size_t)) {
            size_t n;
            memcpy(&n, v.mv_data, sizeof n);
            out->free_pages += n;
        }
    mdb_cursor_close(c);
    ads_txn_abort(t);
    if (rc != MDB_NOTFOUND)
        return ads_error_set(err, ADS_ESTORAGE, "reading the free list: %s", mdb_strerror(rc));
    uint64_t live = out->used_pages > out->free_pages ? out->used_pages - out->free_pages : 0;
    uint64_t need = live * out->page_size;
    out->gain_bytes = out->file_bytes > need ? out->file_bytes - need : 0;
    return 0;
}

int ads_db_compact(const char *dir, const ads_compact_options *opt, ads_compact_result *res,
                   ads_error *err)
{
    if (!dir || !*dir)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_compact_options o = {0, NULL, NULL};
    if (opt)
        o = *opt;
    ads_compact_result r;
    memset(&r, 0, sizeof r);
    char lockpath[4200], datapath[4200], tmp[4200], tmpdata[4300], tmplock[4300];
    if (strlen(dir) > 4000)
        return ads_error_set(err, ADS_ELIMIT, "compact: the path %.60s... is too long", dir);
    snprintf(lockpath, sizeof lockpath, "%s/lock.mdb", dir);
    snprintf(datapath, sizeof datapath, "%s/data.mdb", dir);
    snprintf(tmp, sizeof tmp, "%s.compact-%ld", dir, (long)getpid());
    snprintf(tmpdata, sizeof tmpdata, "%s/data.mdb", tmp);
    snprintf(tmplock, sizeof tmplock, "%s/lock.mdb", tmp);
    struct stat st;
    if (stat(datapath, &st) != 0)
        return ads_error_set(err, ADS_ENOTFOUND, "no store at %s", dir);
    int fd = -1, rc;
    ads_db *db = NULL;

    /* 1. retention, through an ordinary open (first making sure nobody else
     * has the store: the check is made again under the lock below) */
    if ((fd = open(lockpath, O_RDWR)) < 0)
        return sys_error(err, "cannot open", lockpath);
    rc = lock_store(fd, dir, o.wait, err);
    close(fd); /* (closing releases the lock) */
    fd = -1;
    if (rc)
        return rc;
    if ((rc = ads_db_open(&db, dir, 0, err)) ||
        (rc = ads_db_apply_retention(db, &r.retention, err)))
        goto cleanup;
    ads_db_close(db);
    db = NULL;
    r.bytes_before = (uint64_t)file_size(datapath);

    /* 2. the store to ourselves */
    if ((fd = open(lockpath, O_RDWR)) < 0) {
        rc = sys_error(err, "cannot open", lockpath);
        goto cleanup;
    }
    if ((rc = lock_store(fd, dir, o.wait, err)))
        goto cleanup;
    sweep(dir); /* (a compaction still running would hold the lock) */

    /* 3. the copy, synced and checked */
    if (mkdir(tmp, 0700) != 0) {
        rc = sys_error(err, "cannot create", tmp);
        goto cleanup;
    }
    if ((rc = ads_db__repack(dir, tmp, err)))
        goto cleanup;
    if (chmod(tmpdata, 0600) != 0) { /* the store's files are the owner's alone */
        rc = sys_error(err, "cannot set the mode of", tmpdata);
        goto cleanup;
    }
    if ((rc = fsync_path(tmpdata, err)))
        goto cleanup;
    if (o.stage)
        o.stage(o.ctx, "copied");
    {
        ads_db *copy;
        ads_verify_result vr;
        char first[512] = "";
        if ((rc = ads_db_open(&copy, tmp, ADS_DB_READONLY, err)))
            goto cleanup;
        rc = ads_db_verify(&vr, copy, count_problem, first, err);
        ads_db_close(copy);
        if (rc)
            goto cleanup;
        if (vr.problems) {
            rc = ads_error_set(err, ADS_ECORRUPT,
                               "compact: the copy of %s fails its check (%llu problems; the "
                               "first: %s); the store is left as it was",
                               dir, (unsigned long long)vr.problems, first);
            goto cleanup;
        }
    }
    unlink(tmplock);
    r.bytes_after = (uint64_t)file_size(tmpdata);

    /* 4. the swap: one rename */
    if (rename(tmpdata, datapath) != 0) {
        rc = sys_error(err, "cannot rename the copy over", datapath);
        goto cleanup;
    }
    if (o.stage)
        o.stage(o.ctx, "renamed");
    if ((rc = fsync_path(dir, err)))
        goto cleanup;

    /* 5. the lock file set up for the new data file, by LMDB as the first
     * opener (this process holds the exclusive lock) */
    if ((rc = ads_db_open(&db, dir, 0, err)))
        goto cleanup;
cleanup:
    ads_db_close(db);
    if (fd >= 0)
        close(fd);
    remove_dir(tmp);
    if (!rc && res)
        *res = r;
    return rc;
}
