/*
 * engine/engine.h: the adstore store, on LMDB.
 *
 * A store is a directory holding one LMDB environment. This part of the
 * engine opens and creates stores, checks their on-disk format version, and
 * keeps the identifier state (node id, OUID clock sequences, FLUID and
 * k-ordered generators, the increment counter) in a `meta` table that changes
 * in the same write transaction as whatever uses the ids: a crash can never
 * hand out an id twice, and a rolled-back transaction leaves only a gap.
 *
 * Concurrency: many readers and one writer, across threads and processes
 * (LMDB serialises writers). A child process created by fork() must open the
 * store again; it must not use the parent's handle (an LMDB rule).
 *
 * Errors: every fallible call returns 0 or a negative ADS_E* code and fills
 * the ads_error if given: ADS_EINVAL for bad arguments, ADS_ENOTFOUND for a
 * store that does not exist when opened without ADS_DB_CREATE, ADS_EVERSION
 * for a store of an unknown format version, ADS_ECORRUPT for meta records that
 * fail their checks, ADS_ESTORAGE (with LMDB's message) and ADS_EIO for the
 * system, ADS_EREADONLY for writes through a read-only handle.
 */
#ifndef ADS_ENGINE_H
#define ADS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "idgen/idgen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On-disk format version written at creation and checked at open. */
#define ADS_DB_FORMAT_VERSION 1

typedef struct ads_db ads_db;
typedef struct ads_txn ads_txn;

/* Flags for ads_db_open. */
enum {
    ADS_DB_READONLY = 1, /* open for reading only */
    ADS_DB_CREATE = 2    /* create the directory and store if missing */
};

/*
 * Open the store in directory dir. With ADS_DB_CREATE a missing directory is
 * created (mode 0700; files 0600) with a fresh node id. Stale reader slots
 * left by dead processes are cleared. The handle is shared by threads; free it
 * with ads_db_close.
 * Errors: ADS_ENOTFOUND (no store at dir and no ADS_DB_CREATE), ADS_EVERSION,
 * ADS_ECORRUPT, ADS_ESTORAGE, ADS_EIO, ADS_ENOMEM, ADS_EINVAL.
 */
int ads_db_open(ads_db **out, const char *dir, int flags, ads_error *err);

/* Close the store. All transactions must have ended. NULL is allowed. */
void ads_db_close(ads_db *db);

/* The store's 47-bit node id (drawn at creation, kept across restarts). */
uint64_t ads_db_node(const ads_db *db);

/* The 32-bit node fingerprint used in global k-ordered ids: a fixed mix of
 * the 64-bit node id folded to 32 bits (docs/identifiers.md). */
uint32_t ads_db_kid_node(const ads_db *db);

/* Replace the clock the store's generators read (tests drive time with it).
 * The clock is copied. NULL restores the system clock. */
void ads_db_set_clock(ads_db *db, const ads_clock *clock);

/* Flags for ads_txn_begin. */
enum { ADS_TXN_READONLY = 1 };

/*
 * Begin a transaction. A write transaction waits for any other writer, in
 * this process or another. Errors: ADS_EREADONLY (write on a read-only
 * store), ADS_ESTORAGE, ADS_ENOMEM.
 */
int ads_txn_begin(ads_txn **out, ads_db *db, int flags, ads_error *err);

/* Commit and free txn, whatever the outcome. ADS_ESTORAGE. */
int ads_txn_commit(ads_txn *txn, ads_error *err);

/* Abandon and free txn; nothing it wrote remains. NULL is allowed. */
void ads_txn_abort(ads_txn *txn);

/*
 * n new identifiers of a kind, from the store's generators, in a write
 * transaction: ordered (current OUIDs under the store's clock sequence),
 * random (UUIDs), increment (the store's built-in increment counter, from 1).
 * The generator state is written in txn: committed with it, or rolled back
 * with it (a rolled-back increment leaves no gap; the next commit reuses the
 * values no one saw). Errors: ADS_EREADONLY, ADS_ESTORAGE, ADS_ERANGE (clock
 * out of range, counter at 2^64-1), ADS_EIO.
 * *event receives ADS_IDGEN_CLOCK_STEPPED_BACK if the clock was seen going
 * backwards (else 0); event may be NULL.
 */
int ads_txn_new_ids(ads_txn *txn, ads_id_kind kind, ads_id *out, size_t n, int *event,
                    ads_error *err);

/* n new FLUIDs from the store's generator number `generator` (0..16383),
 * epoch ADS_FLUID_EPOCH_ADSTORE_MS (2020-01-01); its last timestamp is kept in the store so ids never repeat
 * across runs. Errors: ADS_ERANGE (generator >= 16384), as above. */
int ads_txn_new_fluids(ads_txn *txn, uint32_t generator, uint64_t *out, size_t n,
                       ads_error *err);

/* n new k-ordered id fields from the store's k-ordered generator (shared by
 * local and global ids; node = ads_db_kid_node). Errors as above. */
int ads_txn_new_kids(ads_txn *txn, ads_kid_fields *out, size_t n, ads_error *err);

/* Read the OUID generator state as committed (or as written by txn). */
int ads_txn_idgen_state(ads_txn *txn, ads_idgen_state *out, ads_error *err);

#ifdef __cplusplus
}
#endif
#endif
