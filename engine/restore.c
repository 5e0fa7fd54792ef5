/*
 * engine/restore.c: rebuilding a store from a dump (shared/spec/tools.md,
 * "Dump and restore"; docs/tools.md). Items come from the dump reader
 * (engine/dump_read.c) and go to disk in batches, so memory stays flat.
 *
 * The store is built in a new directory beside the target and renamed into
 * place only when the trailer's counts and checksum match, so a truncated,
 * corrupt or unknown dump leaves the target as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classad/formats.h"
#include "engine/dump_int.h"

/* ---- restore ---- */

/* A text row back to the store's key and value, in txn (types must be
 * restored already: Type records come first in key order). */
static int text_to_raw(ads_txn *txn, const ads_record *rec, bool latest, ads_buf *key,
                       ads_buf *val, ads_arena *a, ads_error *err)
{
    ads_value v, ts, sys, del;
    if (ads_record_eval_attr(&v, rec, "AdType", 6, a) || v.type != ADS_STRING)
        return ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: a row without AdType");
    const ads_type *t;
    int rc = ads_types__by_name(&t, txn, v.u.s.p, v.u.s.len, err);
    if (rc)
        return rc;
    if (ads_record_eval_attr(&ts, rec, ads_attr__timestamp, 10, a) || ts.type != ADS_ABSTIME ||
        ads_record_eval_attr(&sys, rec, ads_attr__systime, 17, a) || sys.type != ADS_ABSTIME ||
        ads_record_eval_attr(&del, rec, ads_attr__deleted, 8, a) || del.type != ADS_BOOLEAN)
        return ads_error_set(err, ADS_ECORRUPT,
                             "the dump is corrupt: a row without its timeline attributes");
    /* the record without the timeline attributes, as the store keeps it */
    ads_record_builder *b;
    if ((rc = ads_record_builder_new(&b, a, err)))
        return rc;
    for (size_t i = 0; i < ads_record_size(rec); i++) {
        ads_str n = ads_record_name(rec, i);
        if (ads_row__timeline_attr(n.p, n.len))
            continue;
        if ((rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(rec, i), err)))
            return rc;
    }
    const ads_record *plain = ads_record_builder_finish(b);
    ads_buf data = ADS_BUF_INIT, full = ADS_BUF_INIT;
    if ((rc = ads_msgpack_encode_record(&data, plain, err)))
        goto out;
    ads_key__typeid(&full, t->id);
    for (size_t i = 0; i < t->nkeys && !rc; i++) {
        ads_value kv;
        if (ads_record_eval_attr(&kv, plain, t->keys[i].p, t->keys[i].len, a))
            rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
        else
            rc = ads_key__value(&full, &kv, t->keys[i].p, err);
    }
    if (rc)
        goto out;
    unsigned char skey[ADS_KEY_INLINE_MAX + 16];
    size_t slen = ads_key__stored(skey, (const unsigned char *)full.p, full.len, 0);
    int64_t systs = llround(sys.u.abs.secs * 1e6);
    if (!latest) {
        ads_key__sortable_double(skey + slen, ts.u.abs.secs);
        for (int i = 0; i < 8; i++)
            skey[slen + 8 + i] = (unsigned char)((uint64_t)systs >> (56 - 8 * i));
        slen += 16;
    }
    ads_buf_clear(key);
    ads_buf_add(key, skey, slen);
    ads_buf_clear(val);
    ads_row__build_dump(val, skey, slen, del.u.b ? ROW_DELETED : 0, ts.u.abs.secs,
                        ts.u.abs.offset, systs,
                        full.len > ADS_KEY_INLINE_MAX ? (const unsigned char *)full.p : NULL,
                        full.len, (const unsigned char *)data.p, data.len);
    if (key->failed || val->failed)
        rc = ads_error_set(err, ADS_ENOMEM, "out of memory");
out:
    ads_buf_free(&data);
    ads_buf_free(&full);
    return rc;
}

/* A batch of items waiting to be written (kept so a full map can be grown
 * and the batch written again). */
typedef struct batch {
    ads_buf bytes;         /* keys and values, back to back */
    size_t *off;           /* per item: key offset; value follows at off + klen */
    size_t *klen, *vlen;
    uint8_t *kind;
    bool *text;            /* a text row: bytes hold its line, re-parsed in the txn */
    size_t n, cap;
} batch;

static int batch_push(batch *b, int kind, bool text, const void *k, size_t kl, const void *v,
                      size_t vl, ads_error *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        size_t *off = realloc(b->off, cap * sizeof *off);
        if (off)
            b->off = off;
        size_t *klen = realloc(b->klen, cap * sizeof *klen);
        if (klen)
            b->klen = klen;
        size_t *vlen = realloc(b->vlen, cap * sizeof *vlen);
        if (vlen)
            b->vlen = vlen;
        uint8_t *kind_ = realloc(b->kind, cap);
        if (kind_)
            b->kind = kind_;
        bool *t = realloc(b->text, cap * sizeof *t);
        if (t)
            b->text = t;
        if (!off || !klen || !vlen || !kind_ || !t)
            return ads_error_set(err, ADS_ENOMEM, "out of memory");
        b->cap = cap;
    }
    b->off[b->n] = b->bytes.len;
    b->klen[b->n] = kl;
    b->vlen[b->n] = vl;
    b->kind[b->n] = (uint8_t)kind;
    b->text[b->n] = text;
    ads_buf_add(&b->bytes, k, kl);
    ads_buf_add(&b->bytes, v, vl);
    if (b->bytes.failed)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    b->n++;
    return 0;
}

static void batch_free(batch *b)
{
    ads_buf_free(&b->bytes);
    free(b->off);
    free(b->klen);
    free(b->vlen);
    free(b->kind);
    free(b->text);
}

typedef struct restore_run {
    batch *b;
    bool new_node;
    bool last;
} restore_run;

static int restore_fn(ads_txn *txn, void *ctx, ads_error *err)
{
    restore_run *rr = ctx;
    batch *b = rr->b;
    ads_db *db = txn->db;
    ads_arena *a = ads_arena_new();
    ads_buf key = ADS_BUF_INIT, val = ADS_BUF_INIT, ids = ADS_BUF_INIT, scratch = ADS_BUF_INIT;
    MDB_cursor *cur[2] = {NULL, NULL}; /* history, latest */
    int rc = 0;
    if (!a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    for (size_t i = 0; i < b->n && !rc; i++) {
        const char *k = b->bytes.p + b->off[i], *v = k + b->klen[i];
        size_t kl = b->klen[i], vl = b->vlen[i];
        row_env env; /* a row's, parsed once: checked, then made the store's */
        if (b->text[i]) {
            /* a text row: parse its line again and build the stored bytes */
            const ads_record *rec;
            ads_arena_reset(a);
            if ((rc = ads_record_parse(&rec, a, k, kl, err)) ||
                (rc = text_to_raw(txn, rec, b->kind[i] == ITEM_LATEST, &key, &val, a, err))) {
                /* a row the store cannot take (of a type the dump does not
                 * declare, with a key that is not one) is a corrupt dump */
                if (rc != ADS_ENOMEM && rc != ADS_ESTORAGE && rc != ADS_ECORRUPT) {
                    char msg[ADS_ERROR_MESSAGE_MAX];
                    snprintf(msg, sizeof msg, "%s", err ? err->message : "");
                    rc = ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: %s", msg);
                }
                break;
            }
            k = key.p;
            kl = key.len;
            v = val.p;
            vl = val.len;
            if ((rc = ads_row__parse(&env, (const unsigned char *)k, kl,
                                     (const unsigned char *)v, vl, "row", err)))
                break;
        } else if (b->kind[i] != ITEM_META) {
            /* the dump's checksum covers its bytes, not whether the rows it
             * carried were sound when they were dumped */
            char why[ADS_ERROR_MESSAGE_MAX];
            ads_arena_reset(a);
            if (ads_dump__check_row(txn, (const unsigned char *)k, kl, (const unsigned char *)v, vl,
                                    b->kind[i] == ITEM_LATEST, &env, a, why, sizeof why) ||
                ads_dump__check_envelope(txn, (const unsigned char *)k, kl,
                                         (const unsigned char *)v, vl, b->kind[i] == ITEM_LATEST,
                                         a, why, sizeof why)) {
                rc = ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: %s", why);
                break;
            }
        }
        /* rows skip the store call: its limits are checked here (a key's;
         * a name's as the row takes its ids, ads_row__to_ids) */
        if (b->kind[i] != ITEM_META && env.full_key && env.full_key_len > ADS_KEY_MAX_LEN) {
            char name[400];
            ads_arena_reset(a);
            ads_dump__row_name(name, sizeof name, txn, (const unsigned char *)k,
                               b->kind[i] == ITEM_LATEST ? kl : kl - 16, a);
            rc = ads_error_set(err, ADS_ELIMIT, "%s: a key of %zu bytes is over the 1 MiB limit",
                               name, env.full_key_len);
            break;
        }
        /* the store keeps attribute ids where the dump has names, and the
         * packed envelope (format 6: raised after the dump's own format
         * entry, which comes before every row) */
        if (b->kind[i] != ITEM_META) {
            ads_buf_clear(&ids);
            if ((rc = ads_db__format_rows(txn, err)) ||
                (rc = ads_row__to_ids(&ids, &scratch, txn, (const unsigned char *)k, kl, &env,
                                      err)))
                break;
            v = ids.p;
            vl = ids.len;
        }
        if (b->kind[i] == ITEM_META) {
            rc = ads_db__put(txn, db->meta, k, kl, v, vl, 0, err);
        } else {
            /* rows come in key order: appended through a cursor per table */
            bool latest = b->kind[i] == ITEM_LATEST;
            MDB_cursor **c = &cur[latest];
            if (!*c && (rc = mdb_cursor_open(txn->txn, latest ? db->latest : db->history, c))) {
                rc = ads_db__lmdb(txn, err, rc, "restoring");
                break;
            }
            rc = ads_db__cursor_put(txn, *c, k, kl, v, vl, MDB_APPEND, err);
        }
        if (rc && !txn->broken)
            rc = ads_error_set(err, ADS_ECORRUPT,
                               "the dump is corrupt: its rows are out of key order or repeat");
    }
    if (!rc && rr->last && rr->new_node) {
        uint64_t node;
        unsigned char buf[ADS_IDGEN_STATE_BYTES];
        ads_idgen_state st;
        if (!(rc = ads_node_new(&node, err))) {
            unsigned char nb[8];
            for (int i = 0; i < 8; i++)
                nb[i] = (unsigned char)(node >> (8 * i));
            ads_idgen_state_init(&st, node);
            ads_idgen_state_encode(buf, &st);
            if (!(rc = ads_db__meta_put(txn, ADS_META_NODE, strlen(ADS_META_NODE), nb, 8, err)))
                rc = ads_db__meta_put(txn, ADS_META_IDGEN, strlen(ADS_META_IDGEN), buf,
                                      sizeof buf, err);
        }
    }
    for (int i = 0; i < 2; i++)
        if (cur[i])
            mdb_cursor_close(cur[i]);
    ads_buf_free(&key);
    ads_buf_free(&val);
    ads_buf_free(&ids);
    ads_buf_free(&scratch);
    ads_arena_free(a);
    return rc;
}

int ads_dump__check_target(const char *dir, bool *exists, ads_error *err)
{
    struct stat sb;
    *exists = false;
    if (stat(dir, &sb) != 0) {
        if (errno == ENOENT)
            return 0;
        return ads_error_set(err, ADS_EIO, "cannot use %s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode))
        return ads_error_set(err, ADS_EINVAL, "%s is not a directory", dir);
    *exists = true;
    char path[4096];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    if (stat(path, &sb) == 0) {
        ads_db *db;
        if (ads_db_open(&db, dir, ADS_DB_READONLY, err))
            return ads_error_set(err, ADS_EINVAL, "%s holds something that is not an empty store",
                                 dir);
        ads_txn *txn;
        int rc = ads_txn_begin(&txn, db, ADS_TXN_READONLY, err);
        if (!rc) {
            MDB_stat a, b;
            mdb_stat(txn->txn, db->latest, &a);
            mdb_stat(txn->txn, db->history, &b);
            if (a.ms_entries + b.ms_entries)
                rc = ads_error_set(err, ADS_EEXIST,
                                   "%s holds a store with %llu rows: restore needs an empty "
                                   "store",
                                   dir, (unsigned long long)(a.ms_entries + b.ms_entries));
            ads_txn_abort(txn);
        }
        ads_db_close(db);
        return rc;
    }
    DIR *d = opendir(dir);
    if (!d)
        return ads_error_set(err, ADS_EIO, "cannot read %s: %s", dir, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = ads_error_set(err, ADS_EEXIST, "%s is not empty: restore needs an empty store",
                               dir);
    closedir(d);
    return rc;
}

void ads_dump__remove_store_dir(const char *dir)
{
    char p[4300];
    if (snprintf(p, sizeof p, "%s/data.mdb", dir) < (int)sizeof p)
        unlink(p);
    if (snprintf(p, sizeof p, "%s/lock.mdb", dir) < (int)sizeof p)
        unlink(p);
    rmdir(dir);
}

/* The directory holding path (without trailing slashes) and its last name. */
static void split_path(const char *path, char *parent, size_t pcap, char *base, size_t bcap)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    snprintf(base, bcap, "%.*s", (int)(n - b), path + b);
    if (b == 0)
        snprintf(parent, pcap, ".");
    else if (b == 1)
        snprintf(parent, pcap, "/");
    else
        snprintf(parent, pcap, "%.*s", (int)(b - 1), path);
}

int ads_dump__sync_path(const char *path, ads_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ads_error_set(err, ADS_EIO, "cannot open %s to sync it: %s", path,
                             strerror(errno));
    int rc = 0;
    if (fsync(fd) != 0)
        rc = ads_error_set(err, ADS_EIO, "cannot sync %s: %s", path, strerror(errno));
    close(fd);
    return rc;
}

int ads_dump__sync_parent(const char *path, ads_error *err)
{
    char parent[4200], base[4200];
    split_path(path, parent, sizeof parent, base, sizeof base);
    return ads_dump__sync_path(parent, err);
}

void ads_dump__sweep(const char *dir)
{
    static const char *const kinds[] = {".restoring-", ".backup-", ".replaced-"};
    char parent[4200], base[4200], p[8500];
    split_path(dir, parent, sizeof parent, base, sizeof base);
    size_t bl = strlen(base);
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, base, bl) != 0)
            continue;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            const char *num = e->d_name + bl;
            size_t kl = strlen(kinds[k]);
            if (strncmp(num, kinds[k], kl) != 0)
                continue;
            num += kl;
            char *end;
            errno = 0;
            long pid = strtol(num, &end, 10);
            if (num[0] < '0' || num[0] > '9' || *end || errno || pid <= 0)
                continue;
            /* a live process's work in progress is left alone */
            if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                continue;
            if (snprintf(p, sizeof p, "%s/%s", parent, e->d_name) < (int)sizeof p)
                ads_dump__remove_store_dir(p);
        }
    }
    closedir(d);
}

int ads_dump__into_place(const char *tmp, const char *dir, bool exists, ads_error *err)
{
    char old[4200];
    int rc;
    snprintf(old, sizeof old, "%s.replaced-%ld", dir, (long)getpid());
    /* the new store's names reach the disk before the name that finds them */
    if ((rc = ads_dump__sync_path(tmp, err)))
        return rc;
    /* the old (empty) store aside, the new one in, the old one gone */
    if (exists && rename(dir, old) != 0)
        return ads_error_set(err, ADS_EIO, "cannot move %s aside: %s", dir, strerror(errno));
    if (rename(tmp, dir) != 0) {
        rc = ads_error_set(err, ADS_EIO, "cannot move the new store to %s: %s", dir,
                           strerror(errno));
        if (exists)
            rename(old, dir);
        return rc;
    }
    if (exists)
        ads_dump__remove_store_dir(old);
    return ads_dump__sync_parent(dir, err);
}

static int rebuild_indexes(ads_txn *txn, void *ctx, ads_error *err)
{
    (void)ctx;
    return ads_index__rebuild_all(txn, err);
}

int ads_restore(const char *dir, FILE *f, const ads_restore_options *opt, ads_dump_result *res,
                ads_error *err)
{
    if (!dir || !*dir || !f)
        return ads_error_set(err, ADS_EINVAL, "NULL argument");
    ads_restore_options none = {false, NULL, NULL};
    if (!opt)
        opt = &none;
    ads_dump_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    bool exists;
    if (strlen(dir) > 4000)
        return ads_error_set(err, ADS_EINVAL, "the store directory name is too long");
    int rc = ads_dump__check_target(dir, &exists, err);
    if (rc)
        return rc;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.restoring-%ld", dir, (long)getpid());
    ads_dump__sweep(dir);
    ads_dump__remove_store_dir(tmp);
    ads_dump_reader r;
    ads_db *db = NULL;
    batch b;
    memset(&b, 0, sizeof b);
    if ((rc = ads_dump__reader_init(&r, f, err)))
        goto fail;
    ads_db_options o = {(size_t)1 << 30};
    if ((rc = ads_db_open_ex(&db, tmp, ADS_DB_CREATE | ADS_DB_NOSYNC, &o, err)))
        goto fail;
    item it;
    restore_run rr = {&b, opt->new_node, false};
    for (;;) {
        if ((rc = ads_dump__read_item(&r, &it, err)) < 0)
            goto fail;
        if (rc == 0)
            break;
        if (it.kind == -1)
            continue;
        if (it.kind == 99) {
            rr.last = true;
            if ((rc = ads_db_write(db, restore_fn, &rr, err)))
                goto fail;
            break;
        }
        if (it.rec) {
            /* keep the text line: it is parsed again inside the transaction
             * (all of it: a comment may hold a NUL byte) */
            rc = batch_push(&b, it.kind, true, r.line, r.linelen, "", 0, err);
        } else {
            rc = batch_push(&b, it.kind, false, it.key, it.klen, it.val, it.vlen, err);
        }
        if (rc)
            goto fail;
        if (it.kind != ITEM_META)
            res->rows++;
        else
            res->meta++;
        if (b.n >= 20000 || b.bytes.len >= (16u << 20)) {
            if ((rc = ads_db_write(db, restore_fn, &rr, err)))
                goto fail;
            b.n = 0;
            ads_buf_clear(&b.bytes);
            pthread_rwlock_rdlock(&db->resize);
            ads_db__drop_map_pages(db);
            pthread_rwlock_unlock(&db->resize);
            if (opt->progress)
                opt->progress(opt->ctx, res->rows, 0);
        }
    }
    if (!r.ended) {
        rc = ads_dump__corrupt(err, "it ends before its trailer (truncated)");
        goto fail;
    }
    /* indexes are not in a dump: their registry is (meta), so build them */
    if ((rc = ads_db_write(db, rebuild_indexes, NULL, err)))
        goto fail;
    if ((rc = ads_db_sync(db, err)))
        goto fail;
    ads_db_close(db);
    db = NULL;
    res->bytes = r.bytes;
    if (opt->progress)
        opt->progress(opt->ctx, res->rows, res->rows);
    if ((rc = ads_dump__into_place(tmp, dir, exists, err)))
        goto fail;
    ads_dump__reader_fini(&r);
    batch_free(&b);
    return 0;
fail:
    ads_db_close(db);
    ads_dump__remove_store_dir(tmp);
    ads_dump__reader_fini(&r);
    batch_free(&b);
    return rc;
}
