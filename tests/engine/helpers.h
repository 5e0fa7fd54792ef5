/*
 * tests/engine/helpers.h: small stores for engine tests: a temporary store
 * on a fake clock, records stored from their ClassAd text, rows read back as
 * text.
 */
#ifndef ADS_TESTS_ENGINE_HELPERS_H
#define ADS_TESTS_ENGINE_HELPERS_H

#include <stdint.h>

#include "engine/engine.h"

typedef struct tstore {
    char *dir;
    char path[1100];
    ads_db *db;
    int64_t ns; /* the fake clock */
} tstore;

/* A new empty store in a temporary directory, its clock at `secs`. */
ads_db *ts_open(tstore *t, double secs);
/* Open the same store again (after ts_reopen_close). */
ads_db *ts_reopen(tstore *t);
void ts_reopen_close(tstore *t);
/* Close and remove the store. */
void ts_close(tstore *t);
/* Move the fake clock to secs. */
void ts_time(tstore *t, double secs);

/* Store each of the records (ClassAd text) in one transaction. 0 or the
 * code; err gets the message. */
int ts_store(ads_db *db, ads_error *err, const char *text);
/* Store the one record written in text (ClassAd text) in txn. */
int ts_txn_store(ads_txn *txn, const char *text, ads_error *err);
/* Declare a type: ts_store of [AdType="Type"; ForType=...; KeyAttributes=...]
 * from "Name" or "A,B" ("" for keyless); extra is appended inside the record
 * (e.g. "AutoGenerateKey = true;"). Asserts success. */
void ts_declare(ads_db *db, const char *type, const char *keys, const char *extra);

/* The latest row of type/key (key: a ClassAd list text like { "a" }) as
 * `[ ... ]` text with the timeline attributes, malloc'd; NULL if none. */
char *ts_latest(ads_db *db, const char *type, const char *key);
/* One attribute of the latest row, unparsed (malloc'd; "absent" if none). */
char *ts_attr(ads_db *db, const char *type, const char *key, const char *attr);
/* Every row of the record, oldest first, as lines of `[ ... ]` text joined by
 * '\n' (timeline attributes __SystemTimestamp left out), malloc'd. */
char *ts_history(ads_db *db, const char *type, const char *key);
/* Number of latest rows of type (deleted ones too when all). */
size_t ts_count(ads_db *db, const char *type, bool deleted);
/* XOR byte `off` of every occurrence of pat (plen bytes) in file path with
 * mask, behind LMDB's back (a damaged disk). Returns the occurrences. */
size_t ts_flip_file(const char *path, const void *pat, size_t plen, size_t off,
                    unsigned char mask);
/* Verify the store; returns the number of problems (messages printed). */
uint64_t ts_verify(ads_db *db);

/* The first problems a verify reported, and how many it reported in all:
 * pass ts_collect and a zeroed ts_reports to ads_db_verify. */
typedef struct ts_reports {
    int n;
    char text[8][512];
} ts_reports;
void ts_collect(void *ctx, const char *problem);


/* The parts of stored row v under key k as docs/storage.md lays them out
 * (envelope version 1, 32 bytes, or version 2, packed), read without the
 * engine: 0, or -1 when v is not such a row. flags are as stored (8: the
 * dates are the key's last 16 bytes). */
typedef struct ts_env {
    unsigned version, flags;
    double ts;
    int32_t offset;
    int64_t systs;
    size_t at; /* where the long key's length, or the MessagePack row, starts */
} ts_env;
int ts_env_read(ts_env *e, const void *v, size_t vlen, const void *k, size_t klen);
/* Append to out the row of e's fields in envelope version 1 (flag 8
 * dropped), then body (what followed e->at), its checksum made. */
void ts_env_v1(ads_buf *out, const ts_env *e, const void *body, size_t len);

#endif
