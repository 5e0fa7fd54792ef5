/*
 * engine/dump_int.h: what the dump writer (engine/dump.c), the dump reader
 * (engine/dump_read.c), restore (engine/restore.c) and backup
 * (engine/backup.c) share: the format's name and version, the kinds of
 * item, the reader's state, and the checks of a target directory. Not API.
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

/* ---- target directories (restore, backup) ---- */

/* Is dir absent (*exists false), an empty directory, or a store with no rows?
 * Errors: ADS_EEXIST, ADS_EINVAL, ADS_EIO. */
int ads_dump__check_target(const char *dir, bool *exists, ads_error *err);

/* Remove a store directory made by restore or backup (its two files). */
void ads_dump__remove_store_dir(const char *dir);

#endif
