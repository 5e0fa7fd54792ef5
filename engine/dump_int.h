/*
 * engine/dump_int.h: what the dump writer (engine/dump.c), its row checks
 * (engine/dump_check.c), the dump reader (engine/dump_read.c), restore
 * (engine/restore.c) and backup (engine/backup.c) share: the format's name
 * and version, the kinds of item, the reader's state, and the checks of a
 * target directory. Not API.
 */
#ifndef ADS_ENGINE_DUMP_INT_H
#define ADS_ENGINE_DUMP_INT_H

#include <msgpack.h>
#include <stdio.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/engine_int.h"

#define DUMP_FORMAT "adstore-dump"
#define DUMP_VERSION 1
enum { ITEM_META = 0, ITEM_LATEST = 1, ITEM_HISTORY = 2 };

/* ---- reading a dump: items of either format ---- */

typedef struct item {
    int kind; /* -1 header, ITEM_*, 99 trailer */
    const unsigned char *key, *val;
    size_t klen, vlen;
    const ads_record *rec; /* text rows: the record with its timeline attributes */
    uint64_t tmeta, trows, tsum;
    uint64_t node;
} item;

struct ads_dump_reader {
    FILE *f;
    bool text;
    bool started, ended;
    bool res_ready;  /* res is initialised */
    char *buf;       /* msgpack: the stream's bytes [bpos, blen) not yet parsed */
    size_t bpos, blen, bcap;
    msgpack_unpacked res;
    XXH3_state_t *h;
    uint64_t meta, rows, bytes;
    /* text */
    char *line;
    size_t cap;
    size_t linelen; /* the line's bytes without its '\n' (NUL bytes may be among them) */
    long lineno;
    ads_arena *a;          /* items of restore */
    ads_arena *rec_arena;  /* records of ads_dump_reader_next: its caller's arena */
    uint64_t node;
};

/* Start reading f (the first byte decides the encoding); ads_dump__reader_fini
 * frees what it holds, also after a failure. */
int ads_dump__reader_init(ads_dump_reader *r, FILE *f, ads_error *err);
void ads_dump__reader_fini(ads_dump_reader *r);

/* The next item: 1 and *it (pointing into r, valid until the next call), 0
 * after the trailer, or a negative code (ADS_ECORRUPT naming what is wrong,
 * ADS_EVERSION, ADS_EIO, ADS_ENOMEM). The trailer's counts and checksum are
 * checked when it is read. */
int ads_dump__read_item(ads_dump_reader *r, item *it, ads_error *err);

/* "the dump is corrupt: WHAT" (ADS_ECORRUPT). */
int ads_dump__corrupt(ads_error *err, const char *what);

/* ---- checking rows (dump, restore) ---- */

/* "type T, key K" of a stored key (len without a history key's 16 bytes of
 * time), for messages; the type by its id when txn has no such type. */
void ads_dump__row_name(char *out, size_t cap, ads_txn *txn, const unsigned char *key,
                        size_t len, ads_arena *a);

/* Check a stored row (its key size, checksum, envelope and MessagePack):
 * 0 with the row parsed in *env, or ADS_ECORRUPT with "type T, key K:
 * latest row: what is wrong" in why. */
int ads_dump__check_row(ads_txn *txn, const unsigned char *key, size_t klen,
                        const unsigned char *val, size_t vlen, bool latest, row_env *env,
                        ads_arena *a, char *why, size_t cap);
/* ads_dump__check_row for a history row (key of klen >= 21 bytes) already
 * parsed into env and whole (stored whole, or a difference ads_hist__walk
 * made whole): its envelope and checksum were checked as it was read; its
 * MessagePack row is checked. */
int ads_dump__check_made(ads_txn *txn, const unsigned char *key, size_t klen,
                         const row_env *env, ads_arena *a, char *why, size_t cap);
/* A row read from a dump (one ads_dump__check_row passed): its envelope is
 * a dump's (version 1), not a store's packed one. 0, or ADS_ECORRUPT with
 * "type T, key K: latest row: a row of envelope version 2 ..." in why. */
int ads_dump__check_envelope(ads_txn *txn, const unsigned char *key, size_t klen,
                             const unsigned char *val, size_t vlen, bool latest, ads_arena *a,
                             char *why, size_t cap);

/* ---- target directories (restore, backup) ---- */

/* Is dir absent (*exists false), an empty directory, or a store with no rows?
 * Errors: ADS_EEXIST, ADS_EINVAL, ADS_EIO. */
int ads_dump__check_target(const char *dir, bool *exists, ads_error *err);

/* Remove a store directory made by restore or backup (its two files). */
void ads_dump__remove_store_dir(const char *dir);

/* Remove what killed restores and backups of dir left beside it:
 * dir.restoring-PID, dir.backup-PID and dir.replaced-PID whose process is
 * gone (a live one's work in progress is left alone). */
void ads_dump__sweep(const char *dir);

/* fsync the file or directory path; fsync the directory that holds path.
 * Errors: ADS_EIO. */
int ads_dump__sync_path(const char *path, ads_error *err);
int ads_dump__sync_parent(const char *path, ads_error *err);

/* Move the finished store tmp (its data synced) to dir, durably: tmp's
 * directory synced, the old dir (when exists: an empty directory or empty
 * store) moved aside and removed, the parent directory synced. On failure
 * dir is as it was and tmp is the caller's to remove. Errors: ADS_EIO. */
int ads_dump__into_place(const char *tmp, const char *dir, bool exists, ads_error *err);

#endif
