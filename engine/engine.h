/*
 * engine/engine.h: the adstore store, on LMDB (shared/spec/datastore.md;
 * the user's guide, with the on-disk layout and a complete example program,
 * is docs/storage.md).
 *
 * A store is a directory holding one LMDB environment. It keeps records
 * (ClassAds) of declared types; every change appends a row to the record's
 * timeline, so the store answers both "what is true now" (the latest rows)
 * and "what was true then" (history and timeline iteration).
 *
 * Transactions: many readers and one writer, across threads and processes
 * (LMDB's model). A write transaction is atomic and, by default, durable when
 * ads_txn_commit returns. A write transaction reads the clock once, at its
 * first row: every row it writes without a _Timestamp is dated at that
 * instant (and __SystemTimestamp still rises by at least a microsecond per
 * row). Identifiers handed out by a transaction that aborts are not handed
 * out again. ads_db_write runs a function in a write
 * transaction and, if the map fills up, grows it and runs the function again:
 * that is how callers never see a full map. Identifier state, sequence
 * counters and record counts change in the same transaction as the rows that
 * use them.
 *
 * Rows handed out (ads_row) point into LMDB's memory: they are valid until
 * the next call on the scan that returned them, or, for ads_txn_get, until
 * the transaction ends or writes. A child process created by fork() must open
 * the store again (an LMDB rule).
 *
 * Errors: every fallible call returns 0 (or a documented positive count) or
 * a negative ADS_E* code, and fills the ads_error if given:
 *   ADS_EINVAL    bad arguments, or a record the store refuses (no AdType, a
 *                 missing key attribute, a `__` attribute, ...): the message
 *                 names the type and attribute;
 *   ADS_ENOTFOUND an unknown type, sequence, or store;
 *   ADS_EEXIST    a change the store refuses because of what exists (a type
 *                 with records cannot lose its Type record or change its key);
 *   ADS_EVERSION  a store of an unknown format version;
 *   ADS_ECORRUPT  bytes that fail their checksum or structure checks;
 *   ADS_EREADONLY writes through a read-only store or transaction;
 *   ADS_ESTORAGE  LMDB failed (its message is included); ADS_EIO the system;
 *   ADS_ENOMEM    out of memory; ADS_ELIMIT a size limit;
 *   ADS_EMAPFULL  the map filled during a write transaction (ads_txn_commit);
 *   ADS_EBUSY     the store is in use in a way the call cannot wait out.
 */
#ifndef ADS_ENGINE_H
#define ADS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../base/arena.h"
#include "../base/error.h"
#include "../classad/classad.h"
#include "../classad/msgpack.h"
#include "../idgen/idgen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On-disk format versions. A store is created as version 1 and becomes
 * version 2 when its first secondary index is declared (docs/indexes.md),
 * so that a build which knows no indexes refuses it instead of writing
 * rows without their index entries, version 3 when it stores its first
 * attribute name in its name table (rows with attribute ids, engine/names.c),
 * so that a build which knows no name table refuses it instead of misreading
 * its rows, and version 4 when its first composite index (an Attribute
 * record's IndexWith) is declared, so that a build which knows only
 * single-attribute indexes refuses it instead of reading the composite's
 * registry name as one attribute's, and version 5 when it first keeps a
 * history row as its difference from an earlier row (engine/history.c), so
 * that a build which knows only whole rows refuses it instead of misreading
 * those rows, and version 6 when it first writes a row with the packed
 * envelope (engine/row.c: 23 bytes for a row in UTC instead of 32, 7 for a
 * difference, whose dates are its history key's), which a build that knows
 * only the 32-byte envelope would misread, and version 7 when it first
 * keeps a record's history rows in a chunk (engine/chunk.c: up to 32 rows
 * in one history entry), which a build that knows only one row per entry
 * would misread. The version only rises: version 3 may hold indexes,
 * version 4 a name table, version 5 both, version 6 rows of both
 * envelopes, version 7 history entries of both forms. This build reads
 * all seven. */
#define ADS_DB_FORMAT_VERSION 1
#define ADS_DB_FORMAT_INDEXED 2
#define ADS_DB_FORMAT_NAMES 3
#define ADS_DB_FORMAT_COMPOSITE 4
#define ADS_DB_FORMAT_DELTAS 5
#define ADS_DB_FORMAT_ENVELOPE 6
#define ADS_DB_FORMAT_CHUNKS 7

typedef struct ads_db ads_db;
typedef struct ads_txn ads_txn;
typedef struct ads_type ads_type;

/* Called every few thousand rows of a long walk (verify, stats, dump,
 * restore): rows done so far and the total expected (an estimate; 0 when
 * unknown). */
typedef void (*ads_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* ------------------------------------------------------------------------ */
/* Stores                                                                   */
/* ------------------------------------------------------------------------ */

/* Flags for ads_db_open. */
enum {
    ADS_DB_READONLY = 1, /* open for reading only */
    ADS_DB_CREATE = 2,   /* create the directory and store if missing */
    ADS_DB_NOSYNC = 4    /* bulk mode: commits do not wait for the meta page (see below) */
};

typedef struct ads_db_options {
    size_t map_size; /* initial map size in bytes; 0: 1 GiB. The map grows by doubling
                        whenever a write transaction fills it. */
} ads_db_options;
/* Every field at its default (start from it: a field added later keeps its default). */
#define ADS_DB_OPTIONS_INIT {.map_size = 0}

/*
 * Open the store in directory dir. With ADS_DB_CREATE a missing directory is
 * created (mode 0700; files 0600) with a fresh node id. Stale reader slots
 * left by dead processes are cleared. The handle is shared by threads; free it
 * with ads_db_close.
 *
 * ADS_DB_NOSYNC: a commit flushes its pages once and does not wait for
 * its meta page (LMDB's MDB_NOMETASYNC): one flush a commit instead of two.
 * The store keeps its integrity on any file system: the pages a meta page
 * points to are on disk before it is written, so a crash of the machine may
 * undo the last commit, never half of one, and a crash of the process loses
 * nothing. ads_db_sync, ads_bulk_end and ads_db_close make the last commit
 * durable. For bulk loads. (Not MDB_NOSYNC: with it the kernel may write a
 * meta page before the pages it points to, and LMDB keeps its integrity
 * then only on file systems that preserve the order of writes.)
 *
 * Errors: ADS_ENOTFOUND (no store at dir and no ADS_DB_CREATE), ADS_EVERSION,
 * ADS_ECORRUPT, ADS_ESTORAGE, ADS_EIO, ADS_ENOMEM, ADS_EINVAL.
 */
int ads_db_open(ads_db **out, const char *dir, int flags, ads_error *err);
int ads_db_open_ex(ads_db **out, const char *dir, int flags, const ads_db_options *opt,
                   ads_error *err);

/* Close the store (flushing a NOSYNC store). All transactions must have
 * ended. NULL is allowed. */
void ads_db_close(ads_db *db);

/* Flush committed transactions to disk (for ADS_DB_NOSYNC stores; a no-op
 * cost otherwise). ADS_EIO, ADS_ESTORAGE. */
int ads_db_sync(ads_db *db, ads_error *err);

/* The store's 47-bit node id (drawn at creation, kept across restarts). */
uint64_t ads_db_node(const ads_db *db);

/* The store's on-disk format version as it stands (ADS_DB_FORMAT_VERSION,
 * or ADS_DB_FORMAT_INDEXED once an index was declared), into *out. Errors:
 * ADS_EINVAL, ADS_ESTORAGE, ADS_ECORRUPT. */
int ads_db_format(unsigned *out, ads_db *db, ads_error *err);

/* The 32-bit node fingerprint used in global k-ordered ids: a fixed mix of
 * the 64-bit node id folded to 32 bits (docs/identifiers.md). */
uint32_t ads_db_kid_node(const ads_db *db);

/* The current size of the map in bytes (grows on demand). */
size_t ads_db_map_size(ads_db *db);

/* Replace the clock the store reads: for identifiers, default _Timestamp and
 * __SystemTimestamp (tests drive time with it). The clock is copied. NULL
 * restores the system clock. */
void ads_db_set_clock(ads_db *db, const ads_clock *clock);

/* The store's clock now, in seconds since the epoch (what `now` means for
 * statements such as @duration). */
double ads_db_now(ads_db *db);

/* ------------------------------------------------------------------------ */
/* Transactions                                                             */
/* ------------------------------------------------------------------------ */

/* Flags for ads_txn_begin. */
enum { ADS_TXN_READONLY = 1 };

/*
 * Begin a transaction. A write transaction waits for any other writer, in
 * this process or another. Before a write transaction starts, the map is
 * grown if less than a quarter of it is free. A transaction is used by one
 * thread at a time; a thread may hold several read transactions.
 * Errors: ADS_EREADONLY (write on a read-only store), ADS_ESTORAGE, ADS_ENOMEM.
 */
int ads_txn_begin(ads_txn **out, ads_db *db, int flags, ads_error *err);

/*
 * Commit and free txn, whatever the outcome. After a successful commit the
 * store's after-commit hooks run (in this thread, before return).
 * A write call that failed after it changed the store (the map filled, memory
 * ran out half way through a store) left txn broken, as LMDB's MDB_TXN_ERROR:
 * further writes are refused and commit fails with that call's code and "the
 * transaction failed earlier and was abandoned"; nothing of txn remains. A
 * call that refused its input before changing anything leaves txn usable.
 * Errors: ADS_ESTORAGE, ADS_EIO, ADS_EMAPFULL ("the store's map is full":
 * begin again, and the next write transaction grows the map; ads_db_write
 * does that itself), or the code of the write that broke txn. If even the
 * identifier state of an abandoned txn cannot be saved (a full disk), the
 * message says the values it handed out may be handed out again.
 */
int ads_txn_commit(ads_txn *txn, ads_error *err);

/* Abandon and free txn; nothing it wrote remains, except the identifier
 * and sequence state (values handed out stay handed out; if that state
 * cannot be written, nothing reports it: commit a failed transaction instead
 * of aborting it to be told). NULL is allowed. */
void ads_txn_abort(ads_txn *txn);

/* True if txn is read-only. */
bool ads_txn_readonly(const ads_txn *txn);

/* The store txn belongs to. */
ads_db *ads_txn_db(ads_txn *txn);

/*
 * A unit of work for ads_db_write / ads_db_read: returns 0 to commit (write)
 * or a negative code to abort. It may be run more than once (after the map is
 * grown), so it must not have effects outside the transaction that a second
 * run would repeat.
 */
typedef int (*ads_txn_fn)(ads_txn *txn, void *ctx, ads_error *err);

/*
 * Run fn in a write transaction and commit it. If the map fills up at any
 * point, the transaction is abandoned, the map doubled and fn run again.
 * Returns fn's error (nothing committed), or a commit error, or 0.
 *
 * Group commit: callers that arrive while another's work or commit is under
 * way wait, then share one LMDB transaction and one durable commit (at most
 * ADS_GROUP_COMMIT_MAX works); a caller that finds none under way starts at
 * once. Each fn runs in its caller's thread, in a transaction nested in the
 * group's, one after another, seeing the works before it: a failing fn is
 * rolled back alone and its caller gets its own error. Every caller returns
 * only after the group's commit is durable (0), or with the error of that
 * commit. A caller so waits for the fns of the other callers of its group:
 * fn must not wait for anything another thread holds around its own
 * ads_db_write call. Explicit transactions (ads_txn_begin) are not grouped.
 * docs/storage.md, "Durability and concurrency".
 */
int ads_db_write(ads_db *db, ads_txn_fn fn, void *ctx, ads_error *err);

/* Run fn in a read transaction. Returns fn's result or a begin error. */
int ads_db_read(ads_db *db, ads_txn_fn fn, void *ctx, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A record type, as its Type record declares it (shared/spec/datastore.md
 * section 2). Three are built in: Type (keyed by ForType), Attribute (by
 * ForType, ForName) and Sequence (by Name). A keyless type is keyed by `Id`.
 * Type handles are valid until the transaction that returned them ends.
 */
const char *ads_type_name(const ads_type *t);       /* as declared (ForType) */
size_t ads_type_key_count(const ads_type *t);       /* >= 1 */
ads_str ads_type_key(const ads_type *t, size_t i);  /* the i-th key attribute name */
bool ads_type_keyless(const ads_type *t);           /* keyed by an appended Id */
bool ads_type_builtin(const ads_type *t);
/* AutoGenerateKey: the single key attribute is filled from the type's
 * sequence when absent (always true for keyless types). */
bool ads_type_autogen(const ads_type *t);
ads_id_kind ads_type_method(const ads_type *t);     /* AutoGenerateKeyMethod */
/* HistoryRetention in seconds (0: keep all history). */
double ads_type_retention(const ads_type *t);
/* KeepUnchangedRows: a store whose row equals the row in effect appends a
 * row anyway ("last seen" rows). By default it appends nothing. */
bool ads_type_keep_unchanged(const ads_type *t);

/* The type named name (case-insensitive). ADS_ENOTFOUND names it. */
int ads_txn_type(const ads_type **out, ads_txn *txn, const char *name, size_t len,
                 ads_error *err);

/* Record and row counts of a type, kept transactionally. */
typedef struct ads_type_counts {
    uint64_t records; /* records (latest rows), deleted ones included */
    uint64_t deleted; /* records whose latest row is deleted */
    uint64_t history; /* rows that are not latest */
} ads_type_counts;

int ads_txn_type_counts(ads_type_counts *out, ads_txn *txn, const ads_type *t, ads_error *err);

/*
 * Every type, built-in ones first, then declared ones in name order: fn is
 * called for each; a non-zero return stops the walk and is returned.
 */
typedef int (*ads_type_fn)(void *ctx, const ads_type *t, ads_error *err);
int ads_txn_each_type(ads_txn *txn, ads_type_fn fn, void *ctx, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

/*
 * One stored row: a version of a record. The four timeline attributes
 * (_Timestamp, __SystemTimestamp, __Latest, _Deleted) are kept beside the
 * MessagePack bytes and appear in the row's view and decoded record as
 * ordinary attributes. Fields are read-only; `priv` is the engine's.
 */
typedef struct ads_row {
    const ads_type *type;
    const unsigned char *key; /* the record's stored key (opaque bytes) */
    size_t key_len;
    double ts;                /* _Timestamp: seconds since the epoch */
    int32_t ts_offset;        /* its zone offset, seconds east of UTC */
    int64_t systime_us;       /* __SystemTimestamp: microseconds since the epoch */
    bool deleted;             /* _Deleted */
    bool latest;              /* __Latest */
    const unsigned char *data; /* the MessagePack row (classad/msgpack.h) */
    size_t len;
    struct {
        ads_msgpack_view mv;
        bool mv_ready;
        ads_arena *arena;
        const ads_msgpack_names *names; /* the store's attribute names */
    } priv;
} ads_row;

/*
 * The row as a record view for evaluation (parent: an enclosing view, or
 * NULL): the stored attributes plus the four timeline attributes. Values
 * decoded through it live in the row's arena (the scan's, or the one given to
 * ads_txn_get). The view points at row, which must outlive it.
 */
ads_view ads_row_view(ads_row *row, const ads_view *parent);

/* Flags for ads_row_record. */
enum { ADS_ROW_TIMELINE = 1 /* add the four timeline attributes */ };

/* Decode the whole row into a record in arena a (strings copied: the record
 * outlives the row). ADS_ECORRUPT, ADS_ENOMEM. */
int ads_row_record(const ads_record **out, const ads_row *row, unsigned flags, ads_arena *a,
                   ads_error *err);

/* The key attribute values of the row, in key order, as a list value made in
 * arena a. ADS_ECORRUPT, ADS_ENOMEM. */
int ads_row_key_values(ads_value *out, const ads_row *row, ads_arena *a, ads_error *err);

/*
 * The latest row of the record of type t whose key attributes are keys[0..n)
 * (n = ads_type_key_count; values compared as `===` compares). Returns 1 and
 * fills *row (its memory valid until txn ends or writes; decoded values in
 * arena a), or 0 if there is no such record. Deleted records are found too
 * (row->deleted). Errors: ADS_EINVAL (wrong count, a key value that cannot
 * be a key), ADS_ECORRUPT, ADS_ESTORAGE.
 */
int ads_txn_get(ads_txn *txn, ads_row *row, const ads_type *t, const ads_value *keys, size_t n,
                ads_arena *a, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* What a write did. */
typedef struct ads_write_info {
    const ads_type *type;
    bool created;  /* the record did not exist (or was stored again after deletion) */
    bool latest;   /* the new row is the record's latest (false: backfilled into the past) */
    bool changed;  /* a row was appended (false: nothing to do, e.g. deleting a deleted
                      record, or storing a record equal to the row in effect) */
    double ts;
    int64_t systime_us;
    /* the record's key (opaque, as ads_row.key), valid until the
     * transaction's next write; NULL when the write did not reach the key */
    const unsigned char *key;
    size_t key_len;
} ads_write_info;

/*
 * Store record rec with merge semantics (shared/spec/datastore.md section 3):
 * the new row is the row in effect at its _Timestamp (normally the latest)
 * with rec's attributes laid over it; an attribute given as undefined is
 * removed; a record that did not exist or was deleted starts afresh. rec
 * needs AdType naming a declared type and every key attribute, unless the
 * type generates it. `_Timestamp` (an AbsTime) dates the row (default: now);
 * `_Deleted` (a boolean) marks it deleted. A row dated before the latest row
 * goes into the past and does not become latest. Storing a Type record
 * declares or changes a type. Attribute records are created for attribute
 * names the type has not seen.
 * info may be NULL. Errors: ADS_EINVAL (what is wrong, naming type and
 * attribute), ADS_ENOTFOUND (undeclared type), ADS_EEXIST, ADS_EREADONLY,
 * ADS_ECORRUPT, ADS_ESTORAGE, ADS_ENOMEM, ADS_EMAPFULL, or a hook's error.
 * A failure after the store was changed leaves txn broken (ads_txn_commit).
 */
int ads_txn_store(ads_txn *txn, const ads_record *rec, ads_write_info *info, ads_error *err);

/*
 * Append to the record of row (a latest row from ads_txn_get or a scan) a new
 * latest row that is exactly rec (no merge: UPDATE builds rec from the row).
 * rec must keep the record's type and key values; its `_Deleted` (default
 * false) and `_Timestamp` (default now) date and flag the row. Errors as
 * ads_txn_store. The row's memory is no longer valid afterwards.
 */
int ads_txn_put_row(ads_txn *txn, const ads_row *row, const ads_record *rec,
                    ads_write_info *info, ads_error *err);

/*
 * Delete the record of row: append a copy of its latest row with _Deleted =
 * true, dated now. A deleted record is left alone (info->changed false).
 */
int ads_txn_delete(ads_txn *txn, const ads_row *row, ads_write_info *info, ads_error *err);

/* Remove every row of the record of row from disk (the space is reused). */
int ads_txn_purge(ads_txn *txn, const ads_row *row, ads_error *err);

/* What a history trim removed. */
typedef struct ads_trim_result {
    uint64_t rows;    /* rows removed (those of records removed whole included) */
    uint64_t records; /* records removed whole (deleted before the cut) */
} ads_trim_result;

/*
 * Trim the history of the record of row (a latest row from ads_txn_get or a
 * scan) at instant cut (seconds since the epoch): its non-latest rows dated
 * before the row in effect at cut (the last with _Timestamp <= cut) are
 * removed; that row and every later one stay, so a timeline over [t1, t2)
 * with t1 >= cut answers as before. A record whose latest row is a deletion
 * dated before cut is removed whole (as ads_txn_purge; built-in types'
 * records excepted). Adds to *res (may be NULL). The row's memory is no
 * longer valid afterwards. Errors: ADS_EINVAL (NaN cut), ADS_EREADONLY,
 * ADS_ECORRUPT, ADS_ESTORAGE, ADS_EMAPFULL.
 */
int ads_txn_trim_history(ads_txn *txn, const ads_row *row, double cut, ads_trim_result *res,
                         ads_error *err);

/*
 * Apply every type's HistoryRetention in full: each record of a type with a
 * retention is trimmed at now minus the retention (ads_txn_trim_history),
 * one write transaction per type. Writes also apply it as they go, to the
 * record they write (at most ADS_RETENTION_TRIM_PER_WRITE rows per write),
 * and each write purges the records of its type deleted before the cut among
 * the next ADS_RETENTION_SWEEP_PER_WRITE it examines, from where the type's
 * last write stopped (docs/storage.md, "Retention").
 * *res (may be NULL) gets the totals. Errors as ads_db_write.
 */
int ads_db_apply_retention(ads_db *db, ads_trim_result *res, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Reading many rows                                                        */
/* ------------------------------------------------------------------------ */

typedef struct ads_scan ads_scan;

/* Flags for ads_scan_open and ads_history_open. */
enum {
    ADS_SCAN_DELETED = 1, /* include rows with _Deleted true */
    ADS_SCAN_HISTORY = 2  /* every row, not only latest ones (record by record, in time order) */
};

/*
 * Iterate the latest rows of type t (NULL: of every type, in type order)
 * in key order, keeping those for which where (prepared with
 * ads_expr_prepare; NULL: all) evaluates to true on the row's view. Deleted
 * rows are skipped unless ADS_SCAN_DELETED. Works in read and write
 * transactions; in a write transaction the rows of the scan may be
 * rewritten, deleted or purged through the ads_txn_* calls as they come.
 * Errors: ADS_ENOMEM, ADS_ESTORAGE.
 */
int ads_scan_open(ads_scan **out, ads_txn *txn, const ads_type *t, const ads_expr *where,
                  unsigned flags, ads_error *err);

/*
 * The next row: 1 and *row (valid until the next call or close; values
 * decoded through its view live until then too), 0 at the end, or a negative
 * code (ADS_ECORRUPT: a row failed its checksum; the message says which
 * type and where; ADS_ESTORAGE, ADS_ENOMEM).
 */
int ads_scan_next(ads_row **row, ads_scan *s, ads_error *err);

/*
 * Have scan s (of any kind: ads_scan_open, ads_history_open, an index scan)
 * call stop(ctx) before each stored row or index entry it reads, and end
 * with ADS_ELIMIT ("interrupted") as soon as it returns true. A scan whose
 * constraint turns down most rows reads many of them within one
 * ads_scan_next; this is how a caller's time limit or interrupt reaches it
 * there (the statement layer passes its budget and ads_query_interrupt's
 * flag). NULL stop: none (the default).
 */
void ads_scan_set_stop(ads_scan *s, bool (*stop)(void *ctx), void *ctx);

void ads_scan_close(ads_scan *s);

/* Every row of the record of row (or of type t and keys), oldest first, as a
 * scan (flags and where as for ads_scan_open; ADS_SCAN_HISTORY implied). */
int ads_history_open(ads_scan **out, ads_txn *txn, const ads_row *row, const ads_expr *where,
                     unsigned flags, ads_error *err);

/*
 * Timeline iteration for rows over time: the rows of the records of type t
 * (NULL: every type) that are in effect at some instant of [t1, t2), in
 * order of (_Timestamp, __SystemTimestamp). For each record this is the row
 * in effect at t1 (the last with _Timestamp <= t1; it comes first, possibly
 * dated before t1), then every row with t1 < _Timestamp < t2. Only those rows
 * are read, plus one seek per record. *record numbers the record (0, 1, ...
 * in key order) so a caller can follow each record's state. Deleted rows are
 * included (a deletion ends a record's contribution). Needs a read
 * transaction. Memory: a small buffer per record.
 */
typedef struct ads_timeline ads_timeline;
int ads_timeline_open(ads_timeline **out, ads_txn *txn, const ads_type *t, double t1, double t2,
                      ads_error *err);
/* 1 with *row (valid until the next call) and *record, 0 at the end, or an error. */
int ads_timeline_next(ads_row **row, size_t *record, ads_timeline *tl, ads_error *err);
/* Number of records the timeline follows. */
size_t ads_timeline_records(const ads_timeline *tl);
/* Before the first ads_timeline_next: yield the rows record by record (each
 * record's in time order, records in key order) instead of in time order
 * across records; no merge, for callers that need no global order. */
void ads_timeline_by_record(ads_timeline *tl);
void ads_timeline_close(ads_timeline *tl);

/* ------------------------------------------------------------------------ */
/* Secondary indexes (docs/indexes.md)                                      */
/* ------------------------------------------------------------------------ */

/*
 * An index is declared with `Indexed = true` on the Attribute record
 * (ForType, ForName) and is kept by the engine for every latest row. A span
 * is a set of ranges of one index's values, made in an arena; a scan over
 * spans (their union) yields the latest rows whose values lie in them, plus
 * those whose value has no key encoding (expressions, error), each record
 * once, and keeps those for which where holds. A span may hold more rows
 * than a comparison matches (bounds are inclusive, numbers bounded by their
 * double value): pass the whole WHERE as where, and the rows are exact.
 */
typedef struct ads_index_span ads_index_span;
typedef enum { ADS_IX_EQ, ADS_IX_LT, ADS_IX_LE, ADS_IX_GT, ADS_IX_GE } ads_index_op;

/* An empty span over the index on attribute name (len bytes) of t, in
 * arena a: 1 with *out when t has such an index, 0 when not (*out NULL).
 * ADS_EINVAL, ADS_ENOMEM. */
int ads_index_span_new(ads_index_span **out, ads_txn *txn, const ads_type *t, const char *name,
                       size_t len, ads_arena *a, ads_error *err);

/* Composite indexes (`IndexWith` on the Attribute record of their first
 * attribute): an empty span over t's index number i (0 <= i <
 * t's index count; 1 with *out, 0 past the last), its attributes
 * (folded, ads_index_span_attr_at: NULL past the last), and a part: an
 * empty span for the values of one of its attributes (ads_index_span_add
 * and ads_index_span_and fill it as a single index's span). */
int ads_index_span_new_at(ads_index_span **out, ads_txn *txn, const ads_type *t, size_t i,
                          ads_arena *a, ads_error *err);
size_t ads_index_span_nattrs(const ads_index_span *s);
const char *ads_index_span_attr_at(const ads_index_span *s, size_t i, size_t *len);
int ads_index_span_part(ads_index_span **out, const ads_index_span *s, ads_error *err);
/* Fill empty span s (of a composite index) from parts[0..n), the parts
 * of its first n attributes (NULL: that attribute has no term): the
 * product of the values of the first parts that are each exact values
 * (`==`, `is`, `in`), followed by the ranges of the next part. *used: the
 * attributes it covers (0: the first has no part; s is then unusable).
 * The product is at most ADS_INDEX_PRODUCT_MAX ranges (the attributes
 * past that are left out). ADS_EINVAL, ADS_ENOMEM. */
int ads_index_span_compose(size_t *used, ads_index_span *s, ads_index_span *const *parts,
                           size_t n, ads_error *err);

/* Add to s the values v that `x op v` may hold for (EQ: `==`, `===`, `is`;
 * undefined for `is undefined`). 0, or 1 when v bounds nothing (a list
 * with `<`): the span is then unchanged and the term must not use it.
 * ADS_ENOMEM. */
int ads_index_span_add(ads_index_span *s, ads_index_op op, const ads_value *v, ads_error *err);

/* s becomes its intersection with o (a span of the same index: the AND of
 * two terms on one attribute). ADS_EINVAL, ADS_ENOMEM. */
int ads_index_span_and(ads_index_span *s, const ads_index_span *o, ads_error *err);
bool ads_index_span_same(const ads_index_span *a, const ads_index_span *b);
/* The attribute (folded; a composite index's as "(a, b)") and the number
 * of value ranges of a span. */
const char *ads_index_span_attr(const ads_index_span *s);
size_t ads_index_span_ranges(const ads_index_span *s);

/* Entries of s, counted up to cap (an estimate for the planner: it reads
 * at most cap entries). The span remembers how far it counted: a later
 * call in the same transaction, with no write in between, goes on from
 * there, so counting in rounds of growing caps reads each entry once.
 * ADS_EINVAL, ADS_ENOMEM, ADS_ESTORAGE. */
int ads_index_span_count(uint64_t *out, ads_txn *txn, ads_index_span *s, uint64_t cap,
                         ads_error *err);

/* A scan of type t's latest rows through the union of spans (n >= 1, all
 * of t), filtered by where, as ads_scan_open (flags: ADS_SCAN_DELETED). The
 * order is the spans' value order, not key order. In a write transaction
 * the records that qualify are all found (their keys kept, a few bytes
 * each) before the first is returned, and each is read again as it is
 * returned: the caller may rewrite, delete or purge each row as it comes,
 * though that moves its index entries.
 * ADS_EINVAL, ADS_ENOMEM, ADS_ESTORAGE; ads_scan_next may return
 * ADS_ECORRUPT for an entry that names no record. */
int ads_index_scan_open(ads_scan **out, ads_txn *txn, const ads_type *t,
                        ads_index_span *const *spans, size_t n, const ads_expr *where,
                        unsigned flags, ads_error *err);

/* Make index scan s skip, before reading its row, every record without an
 * entry in span (a span of another index of the type: the other term of
 * an AND). Only spans of exact values can be probed so (`==`, `is`, `in`
 * of values; numbers within 2^53): 1 if taken, 0 if not (nothing
 * changes; the WHERE decides as before). At most ADS_INDEX_FILTERS_MAX.
 * When the scan's own span (n == 1) is exact too, the scan merges the
 * spans instead of probing: a value's entries lie in record key order, so
 * each span's cursor is moved to the record the others have reached
 * (a leapfrog), and the work follows the span with fewest entries,
 * whichever it is. */
int ads_index_scan_filter(ads_scan *s, const ads_index_span *span);
/* Would ads_index_scan_filter take span (its ranges all exact values)? */
bool ads_index_span_exact(const ads_index_span *s);

/* Rows (or index entries, for an index scan) a scan has read so far. */
uint64_t ads_scan_read(const ads_scan *s);

/* What a scan has read so far (EXPLAIN ANALYZE): index entries (0 for a
 * scan of the rows), entries passed over because a probed index
 * (ads_index_scan_filter) has no entry for their record, and rows read
 * from the table, whether the where kept them or not. Plain counters. */
typedef struct ads_scan_counts {
    uint64_t entries, probed_out, rows;
} ads_scan_counts;
void ads_scan_counts_get(ads_scan_counts *out, const ads_scan *s);

/* Figures of one index, as ads_db_index_stats reports them. */
typedef struct ads_index_stats {
    const char *type, *attr; /* valid during the call */
    uint64_t entries, bytes;  /* bytes: keys and values of its entries */
} ads_index_stats;

/* Call fn for every index, by type id then attribute. A non-zero return
 * from fn stops the walk and is returned. ADS_ESTORAGE, ADS_ENOMEM. */
int ads_db_index_stats(ads_db *db, int (*fn)(void *ctx, const ads_index_stats *s), void *ctx,
                       ads_error *err);

/* ------------------------------------------------------------------------ */
/* Identifiers and sequences                                                */
/* ------------------------------------------------------------------------ */

/*
 * n new identifiers of a kind, from the store's generators, in a write
 * transaction: ordered (current OUIDs under the store's clock sequence),
 * random (UUIDs), increment (the store's built-in increment counter, from 1).
 * The generator state is written in txn and commits with it. Values handed
 * out are never handed out again, even if txn aborts: an abort keeps the
 * generator state (it leaves a gap in increment ids) and nothing else.
 * Errors: ADS_EREADONLY, ADS_ESTORAGE, ADS_ERANGE (clock out of range,
 * counter at 2^64-1), ADS_EIO. *event receives
 * ADS_IDGEN_CLOCK_STEPPED_BACK if the clock was seen going backwards (else 0);
 * event may be NULL.
 */
int ads_txn_new_ids(ads_id *out, size_t n, int *event, ads_txn *txn, ads_id_kind kind,
                    ads_error *err);

/* n new FLUIDs from the store's generator number `generator` (0..16383),
 * epoch ADS_FLUID_EPOCH_ADSTORE_MS; its last timestamp is kept in the store
 * so ids never repeat across runs. Errors: ADS_ERANGE (generator >= 16384). */
int ads_txn_new_fluids(uint64_t *out, size_t n, ads_txn *txn, uint32_t generator, ads_error *err);

/* n new k-ordered id fields from the store's k-ordered generator (node =
 * ads_db_kid_node). Errors as above. */
int ads_txn_new_kids(ads_kid_fields *out, size_t n, ads_txn *txn, ads_error *err);

/* Read the OUID generator state as committed (or as written by txn). */
int ads_txn_idgen_state(ads_idgen_state *out, ads_txn *txn, ads_error *err);

/*
 * The next value of a named sequence (shared/spec/identifiers.md section 3):
 * "random" (a UUID), "ordered" (a current OUID), "type:NAME" (the sequence
 * behind type NAME's generated keys), or the Name of a Sequence record, whose
 * Method (ordered, random, increment: default) and ValueType (id: default,
 * string, integer) say what it gives. *out is an identifier, a string (made
 * in arena a) or an integer. Needs a write transaction.
 * Errors: ADS_ENOTFOUND (no such sequence), ADS_EINVAL (a Sequence record
 * with a bad Method or ValueType, integer asked of a non-increment sequence:
 * the message names the sequence), ADS_EREADONLY, ADS_ERANGE.
 */
int ads_txn_next_value(ads_value *out, ads_txn *txn, const char *name, size_t len, ads_arena *a,
                       ads_error *err);

/*
 * The last value an increment sequence handed out (0 if none yet): for a
 * Sequence record's Name, or "type:NAME". *out is 0 for sequences that are
 * not counters (random, ordered). Errors: ADS_ESTORAGE, ADS_ECORRUPT.
 */
int ads_txn_sequence_last(uint64_t *out, ads_txn *txn, const char *name, size_t len,
                          ads_error *err);

/* ------------------------------------------------------------------------ */
/* Bulk loading                                                             */
/* ------------------------------------------------------------------------ */

typedef struct ads_bulk ads_bulk;

/*
 * A snapshot sync: the keys of the records one or more bulk loads stored
 * (ads_bulk_options.sync), so that afterwards every record of the types
 * they stored (or of one type given) that they did not store can be
 * deleted. Memory holds every key seen.
 */
typedef struct ads_sync ads_sync;

int ads_sync_new(ads_sync **out, ads_error *err);
void ads_sync_free(ads_sync *s); /* NULL is allowed */

/* The latest time of the records noted: their own _Timestamp in a backfill,
 * else the date of the row each write left in effect (NAN if none). */
double ads_sync_latest(const ads_sync *s);

/*
 * In write transaction txn: delete every record of the types noted (and of
 * type `also`, may be NULL) whose key was not noted, as DELETE does
 * (deleted records are left alone). With ts NaN each deletion is dated now;
 * else it is dated ts (a backfill), and a record whose latest row is dated
 * at or after ts is left alone (it was not stored by the snapshot). *deleted (may
 * be NULL) gets how many were deleted. Errors as ads_txn_delete.
 */
int ads_sync_delete(ads_sync *s, ads_txn *txn, const ads_type *also, double ts,
                    uint64_t *deleted, ads_error *err);

typedef struct ads_bulk_batch {
    uint64_t first;   /* number of the batch's first record in this load (from 0) */
    size_t count;     /* records in the batch */
    double ts_lo, ts_hi; /* backfill: the batch's time range */
} ads_bulk_batch;

typedef struct ads_bulk_options {
    size_t batch;  /* records per transaction; 0: 10000 */
    bool backfill; /* every record gives _Timestamp; generated OUIDs come from the
                      backfill clock sequence, one batch = one backfill range */
    bool replace;  /* each record is the whole row: it replaces the row in effect at its
                      date instead of being laid over it (attributes it lacks are gone),
                      as UPDATE does; for loading whole rows such as a dump's */
    /* Called inside each batch's transaction, after its records are stored and
     * before commit (an import records its progress here, so progress and
     * records commit together). May be NULL. A non-zero return aborts the batch. */
    int (*on_batch)(void *ctx, ads_txn *txn, const ads_bulk_batch *b, ads_error *err);
    void *ctx;
    ads_sync *sync; /* may be NULL: notes the key and type of each record stored */
} ads_bulk_options;
/* Every field at its default (start from it: a field added later keeps its default). */
#define ADS_BULK_OPTIONS_INIT {.batch = 0}

/* Begin a bulk load into db. Errors: ADS_EINVAL, ADS_ENOMEM, ADS_EREADONLY. */
int ads_bulk_begin(ads_bulk **out, ads_db *db, const ads_bulk_options *opt, ads_error *err);

/*
 * Add a record (copied: rec may be freed at once). When the batch is full it
 * is stored and committed in one transaction (with map growth and retry).
 * A record that cannot be encoded is refused at once (nothing queued). An
 * error while storing a batch aborts the whole batch: nothing of it is
 * committed, and the error says which record of the batch (its number in the
 * load) failed. Errors: as ads_txn_store.
 */
int ads_bulk_add(ads_bulk *b, const ads_record *rec, ads_error *err);

/*
 * Add the record whose attribute names[i] has value values[i] (n of them,
 * in any order; copied), as ads_bulk_add adds the record those make, the
 * same row stored: for a program that has its attributes in arrays (an
 * agent reading counters), which then builds no record. Values only (an
 * expression is added through ads_bulk_add). Errors: as ads_bulk_add.
 */
int ads_bulk_add_values(ads_bulk *b, const ads_str *names, const ads_value *values, size_t n,
                        ads_error *err);

/* Store and commit what is queued. */
int ads_bulk_flush(ads_bulk *b, ads_error *err);

/* Records committed so far, records queued but not committed, and records
 * ever queued (the number the next record added will have in the load). */
uint64_t ads_bulk_committed(const ads_bulk *b);
size_t ads_bulk_pending(const ads_bulk *b);
uint64_t ads_bulk_added(const ads_bulk *b);
/* Of the records committed, those that appended no row: equal to the row
 * in effect at their date (ads_txn_store), so nothing changed. */
uint64_t ads_bulk_unchanged(const ads_bulk *b);

/* Drop what is queued (nothing of it is stored). */
void ads_bulk_discard(ads_bulk *b);

/* After ads_bulk_add or ads_bulk_flush failed on a record: its number in the
 * load (from 0); UINT64_MAX if the failure was not about one record. The
 * failed batch stays queued: discard it, or drop just that record with
 * ads_bulk_drop_failed and flush again (an import's --keep-going). */
uint64_t ads_bulk_failed(const ads_bulk *b);
int ads_bulk_drop_failed(ads_bulk *b, ads_error *err);

/* Flush what is queued, sync the store to disk, and free b (also on error).
 * NULL is allowed. */
int ads_bulk_end(ads_bulk *b, ads_error *err);

/*
 * Add a row already encoded (ads_msgpack_encode_row's bytes; copied), as
 * ads_bulk_add adds a record. A row keyed by a store's attribute ids (a
 * stage's: ads_bulk_add_staged) is refused at once, ADS_EINVAL. Errors: as
 * ads_bulk_add.
 */
int ads_bulk_add_row(ads_bulk *b, const void *row, size_t len, ads_error *err);

/*
 * A sorted load (engine/stage.c): records are encoded and keyed as they are
 * added and collected into runs sorted by stored record key, then by the
 * order added; a run of run_bytes (0: ADS_STAGE_RUN_BYTES of base/limits.h)
 * is spilled to a temporary file in directory dir (made and unlinked at
 * once: nothing is left behind, whatever happens to the process). Once
 * every record is added, ads_stage_merge starts the merge and ads_stage_next
 * gives the rows back in key order for ads_bulk_add_staged, so that the
 * store is written front to back. Once its first records have come, a
 * stage encodes the records of the shapes it has seen keyed by the store's
 * attribute ids (it gives their names ids in a write transaction of its
 * own): such rows are read only through the store's name table. A row whose key cannot be known when it is
 * added (its type is not declared yet or has hooks, its key is generated or
 * not all given) comes after every keyed row, in the order added. The order
 * is the same every time for the same records and the same types.
 *
 * Memory: one run, plus while merging ADS_STAGE_READ_BUFFER and the current
 * row of each run on disk; at most ADS_STAGE_MERGE_WAYS runs are merged at
 * once (more are merged into one first).
 */
typedef struct ads_stage ads_stage;

/* Errors: ADS_EINVAL, ADS_ENOMEM. */
int ads_stage_begin(ads_stage **out, ads_db *db, const char *dir, size_t run_bytes,
                    ads_error *err);

/* Add a record with the caller's tag (an import's input line), given back
 * with its row. It may write to the store (a small transaction giving new
 * names ids, kept whatever becomes of the load); called from inside a write
 * on the same handle it does not, and stages that record with names.
 * Errors: as ads_msgpack_encode_row (nothing added), ADS_EIO (spilling a
 * run: the message names the directory), ADS_ENOMEM, ADS_EINVAL after
 * ads_stage_merge. */
int ads_stage_add(ads_stage *s, const ads_record *rec, int64_t tag, ads_error *err);

/* End adding and start the merge. Errors: ADS_EIO, ADS_ENOMEM, ADS_EINVAL. */
int ads_stage_merge(ads_stage *s, ads_error *err);

/* The next row in key order: 1 with *row and *len (valid until the next
 * call) and *tag, 0 at the end, or ADS_EIO, ADS_ENOMEM, ADS_EINVAL. */
int ads_stage_next(const void **row, size_t *len, int64_t *tag, ads_stage *s, ads_error *err);

/* Add the row ads_stage_next gave last to b, a load of the store the stage
 * was made for (copied), as ads_bulk_add_row adds a row: keyed by names,
 * or by the store's attribute ids. Errors: as ads_bulk_add; ADS_EINVAL when
 * the stage has given no row, or for a row keyed by ids and a load of
 * another store handle. */
int ads_bulk_add_staged(ads_bulk *b, const ads_stage *s, ads_error *err);

/* Runs spilled to disk, and the bytes written to temporary files (runs and
 * their merges). */
uint64_t ads_stage_runs(const ads_stage *s);
uint64_t ads_stage_spilled_bytes(const ads_stage *s);

/* Free s and its temporary files. NULL is allowed. */
void ads_stage_free(ads_stage *s);

/* ------------------------------------------------------------------------ */
/* Dump, restore, backup                                                    */
/* ------------------------------------------------------------------------ */

enum { ADS_DUMP_MSGPACK = 0, ADS_DUMP_TEXT = 1 };

typedef struct ads_dump_options {
    int format;                /* ADS_DUMP_MSGPACK or ADS_DUMP_TEXT */
    const char *const *types;  /* only these types (Type, Attribute and Sequence records come
                                  along); NULL: every type */
    size_t ntypes;
    const char *const *exclude; /* leave these types out */
    size_t nexclude;
    ads_progress_fn progress;
    void *ctx;
    bool salvage; /* leave out rows that fail their checks instead of refusing */
    void (*bad_row)(void *ctx, const char *what); /* salvage: each row left out, as
                                                     "type T, key K: what is wrong" */
} ads_dump_options;
/* Every field at its default (start from it: a field added later keeps its default). */
#define ADS_DUMP_OPTIONS_INIT {.format = ADS_DUMP_MSGPACK}

typedef struct ads_dump_result {
    uint64_t rows, meta, bytes;
    uint64_t skipped; /* salvage: rows left out */
} ads_dump_result;

/*
 * Write the whole store to f (docs/formats.md, "Dump format"): a header, the
 * store's metadata, every row of every record in key order, and a trailer
 * with counts and a checksum, from one read transaction (writers may go on).
 * Every row is checked (checksum, envelope, MessagePack) before it is
 * written: a bad row stops the dump with ADS_ECORRUPT naming its type and key
 * (what was written before it is no dump: it has no trailer), unless
 * opt->salvage, which leaves bad rows out, reports each to opt->bad_row and
 * counts them in res->skipped. Memory stays flat. Errors: ADS_ENOTFOUND (an
 * unknown type in the options), ADS_EIO (writing failed), ADS_ESTORAGE,
 * ADS_ECORRUPT, ADS_ENOMEM.
 */
int ads_db_dump(ads_db *db, FILE *f, const ads_dump_options *opt, ads_dump_result *res,
                ads_error *err);

typedef struct ads_restore_options {
    bool new_node; /* draw a new node id (and fresh OUID generator state) */
    ads_progress_fn progress;
    void *ctx;
} ads_restore_options;
/* Every field at its default (start from it: a field added later keeps its default). */
#define ADS_RESTORE_OPTIONS_INIT {.new_node = false}

/*
 * Rebuild a store in directory dir from the dump read from f (either
 * format). dir must not exist, be an empty directory, or hold a store with no
 * rows. The store is built beside dir and moved into place only when the
 * dump's trailer counts and checksum match, so any failure leaves dir as it
 * was. Every row is checked as it is loaded (checksum, envelope, MessagePack;
 * a text row must parse and be a row of a declared type): one bad row refuses
 * the whole dump. Errors: ADS_EEXIST (dir holds rows or files), ADS_ECORRUPT (a
 * truncated or corrupt dump: the message says what), ADS_EVERSION (an
 * unknown dump format version), ADS_EIO, ADS_ENOMEM, ADS_ESTORAGE.
 */
int ads_restore(const char *dir, FILE *f, const ads_restore_options *opt, ads_dump_result *res,
                ads_error *err);

/*
 * A dump read as records (for importing one into a store that has data):
 * each row comes back as its record with _Timestamp and _Deleted (the
 * store's __SystemTimestamp and __Latest are left out), oldest rows of a
 * record first; metadata is skipped. The end of the dump checks its counts
 * and checksum (ADS_ECORRUPT), as restore does.
 */
typedef struct ads_dump_reader ads_dump_reader;
int ads_dump_reader_new(ads_dump_reader **out, FILE *f, ads_error *err);
/* 1 and *out (made in arena a), 0 at the end, or a negative code. */
int ads_dump_reader_next(const ads_record **out, ads_dump_reader *r, ads_arena *a, ads_error *err);
void ads_dump_reader_free(ads_dump_reader *r);

/*
 * A consistent, compacted, verified copy of the live store into directory
 * dir (which must not exist, or be empty, or hold an empty store): LMDB's
 * compacting copy through a read transaction, so writers go on meanwhile.
 * The copy is built in dir.backup-PID beside dir, synced, checked as
 * ads_db_verify checks a store, and only then renamed into place (and the
 * rename synced), so dir is never half a store; what a killed backup or
 * restore of dir left beside it is removed first. The copy is a complete
 * store (mode 0600 in a 0700 directory). progress (may be NULL) is called
 * while the copy is checked. Errors: ADS_EEXIST, ADS_ECORRUPT (the copy
 * fails its check: the message gives the number of problems and the first),
 * ADS_EIO, ADS_ESTORAGE.
 */
int ads_db_backup(ads_db *db, const char *dir, ads_error *err);
int ads_db_backup_ex(ads_db *db, const char *dir, ads_progress_fn progress, void *ctx,
                     ads_error *err);

/* Where a store's file goes, and what compaction would give back. */
typedef struct ads_db_space {
    uint64_t file_bytes;  /* size of data.mdb */
    uint64_t page_size;
    uint64_t used_pages;  /* pages up to the last used one */
    uint64_t free_pages;  /* of those, pages free for reuse (LMDB's free list) */
    uint64_t gain_bytes;  /* what ads_db_compact gives back at least (the free pages,
                           * before retention; it also fills partly empty pages) */
} ads_db_space;

/* Fill *out. Errors: ADS_ESTORAGE, ADS_EINVAL. */
int ads_db_space_get(ads_db_space *out, ads_db *db, ads_error *err);

/* How a table lies in the file, from a sample of its first entries in key
 * order (ads_db_layout_get): the share of the room in its leaf pages that
 * its entries use, and the share of steps from one leaf page to the next
 * that go forward in the file by at most a few pages (a scan reads such a
 * table front to back). A table loaded in key order, or compacted, has both
 * near 1; one written in no particular key order about 0.7 and near 0. */
typedef struct ads_table_layout {
    uint64_t entries;    /* sampled */
    uint64_t leaf_pages; /* the leaf pages they lie in */
    double fill;         /* 0..1; 1 for an empty table */
    double in_order;     /* 0..1; 1 for a table of one page or none */
} ads_table_layout;

typedef struct ads_db_layout {
    ads_table_layout latest, history;
} ads_db_layout;

/* Fill *out, reading at most ADS_LAYOUT_SAMPLE entries of each table.
 * Errors: ADS_ESTORAGE, ADS_EINVAL. */
int ads_db_layout_get(ads_db_layout *out, ads_db *db, ads_error *err);
/* Whether compaction would lay the table out afresh: sampled in at least
 * ADS_LAYOUT_MIN_PAGES pages, less than ADS_LAYOUT_FILL_MIN full or fewer
 * than ADS_LAYOUT_ORDER_MIN of its page steps forward. */
bool ads_table_layout_scattered(const ads_table_layout *t);

typedef struct ads_compact_options {
    double wait; /* seconds to wait for other processes to close the store; 0: refuse at once */
    void (*stage)(void *ctx, const char *stage); /* called at "copied" and "renamed" (tests) */
    void *ctx;
} ads_compact_options;
/* Every field at its default (start from it: a field added later keeps its default). */
#define ADS_COMPACT_OPTIONS_INIT {.wait = 0}

typedef struct ads_compact_result {
    ads_trim_result retention; /* what retention removed first */
    uint64_t bytes_before, bytes_after; /* sizes of data.mdb */
} ads_compact_result;

/*
 * Rewrite the store in directory dir in place into the smallest file: every
 * type's HistoryRetention is applied (ads_db_apply_retention), then a copy
 * with every table in key order and its pages full is built in
 * dir.compact-PID beside dir, synced, checked
 * as ads_db_verify checks a store, and renamed over dir/data.mdb in one
 * step, so a crash at any point leaves either the old or the new store,
 * whole (what a killed compaction left beside dir is removed by the next).
 * No other process may have the store open: compaction waits up to
 * opt->wait seconds for them to close it, then fails with ADS_EBUSY naming
 * one; a process that opens the store meanwhile waits until it is done.
 * The caller must not have the store open either. opt and res may be NULL.
 * Errors: ADS_EBUSY, ADS_ENOTFOUND (no store at dir), ADS_ECORRUPT (the copy
 * fails its check: the store is left as it was), ADS_EIO, ADS_ESTORAGE, and
 * those of ads_db_open.
 */
int ads_db_compact(const char *dir, const ads_compact_options *opt, ads_compact_result *res,
                   ads_error *err);

/* ------------------------------------------------------------------------ */
/* Hooks                                                                    */
/* ------------------------------------------------------------------------ */

/* A committed change, as after-commit notifications report it. */
typedef enum ads_change_kind { ADS_CHANGE_STORED, ADS_CHANGE_DELETED, ADS_CHANGE_PURGED } ads_change_kind;

typedef struct ads_change {
    const char *type;    /* the type's name */
    ads_change_kind kind;
    ads_value key;       /* the key attribute values, as a list */
    double ts;           /* _Timestamp of the new row (0 for purges) */
    int64_t systime_us;
    bool latest;         /* the new row became latest */
} ads_change;

/*
 * The three hook points of a type (shared/spec/datastore.md section 6). All
 * are optional. Hooks run in the thread that writes.
 *
 * prestore: before a record of the type is stored (ads_txn_store, bulk
 * loads): it may return a replacement record in *out (made in arena a), for
 * example with defaults filled in, leave *out NULL to keep rec, or reject the
 * record by returning a negative code with a message in err.
 *
 * trigger: inside the transaction, for every new row of the type (store,
 * put_row, delete): old is the row it follows (NULL for a new record) and
 * new_row the row about to be written. It may return a replacement record in
 * *out (stored as is, no merge; same type and key), or veto the write by
 * returning a negative code, which aborts the operation.
 *
 * notify: after a transaction that changed records of the type commits, with
 * the changes in batches of at most 1024 (key values valid during the call).
 */
typedef struct ads_hooks {
    int (*prestore)(void *ctx, ads_txn *txn, const ads_record *rec, const ads_record **out,
                    ads_arena *a, ads_error *err);
    int (*trigger)(void *ctx, ads_txn *txn, ads_row *old, ads_row *new_row,
                   const ads_record **out, ads_arena *a, ads_error *err);
    void (*notify)(void *ctx, const ads_change *changes, size_t n);
    void *ctx;
} ads_hooks;

/* Set (or with NULL clear) the hooks of type name (which need not be declared
 * yet). Errors: ADS_EBUSY while any transaction of db is open (their type
 * information would change under them), ADS_EINVAL, ADS_ENOMEM. */
int ads_db_set_hooks(ads_db *db, const char *type, const ads_hooks *hooks, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Application metadata                                                     */
/* ------------------------------------------------------------------------ */

/*
 * Small values an application keeps in the store beside the records, changed
 * transactionally (the import command keeps its per-file progress here).
 * Keys are strings of 1..200 bytes, values up to 64 KiB.
 * ads_txn_meta_get: 1 and *value (valid until txn ends or writes), 0 if
 * absent. ads_txn_meta_put with value NULL deletes the key.
 */
int ads_txn_meta_get(ads_txn *txn, const char *key, ads_str *value, ads_error *err);
int ads_txn_meta_put(ads_txn *txn, const char *key, const void *value, size_t len,
                     ads_error *err);

/* ------------------------------------------------------------------------ */
/* Checking and statistics                                                  */
/* ------------------------------------------------------------------------ */

typedef struct ads_verify_result {
    uint64_t records, rows, problems;
} ads_verify_result;

/*
 * Check the whole store in one read transaction: every row's checksum and
 * structure, exactly one latest row per record (dated no earlier than its
 * history), every key agreeing with the key attributes of its rows, every
 * record of a declared type, record counts agreeing with the rows, and
 * sequences and generator state ahead of every identifier issued. report is
 * called with a message for each problem found, progress now and then (both
 * may be NULL). Returns 0 and fills *out (problems 0 means the store is
 * sound), or an error that stopped the check (ADS_ESTORAGE, ADS_ENOMEM).
 */
int ads_db_verify(ads_verify_result *out, ads_db *db,
                  void (*report)(void *ctx, const char *problem), void *ctx, ads_error *err);
int ads_db_verify_ex(ads_verify_result *out, ads_db *db,
                     void (*report)(void *ctx, const char *problem), ads_progress_fn progress,
                     void *ctx, ads_error *err);

/* Figures of one type, as ads_db_type_stats reports them. */
typedef struct ads_type_stats {
    const char *name;      /* the type's name (valid during the call) */
    ads_type_counts counts;
    uint64_t latest_bytes; /* bytes of its latest rows (envelopes and keys included) */
    uint64_t history_bytes;
} ads_type_stats;

/*
 * Walk the store once and call fn for every type that has rows or is
 * declared, built-in types first, then declared types by name. A non-zero
 * return from fn stops the walk and is returned. progress may be NULL.
 * Errors: ADS_ESTORAGE, ADS_ENOMEM, ADS_ECORRUPT.
 */
int ads_db_type_stats(ads_db *db, int (*fn)(void *ctx, const ads_type_stats *s),
                      ads_progress_fn progress, void *ctx, ads_error *err);

typedef struct ads_db_info {
    size_t map_size;      /* bytes reserved for the map */
    size_t used_bytes;    /* bytes of the map in use (pages up to the last used) */
    size_t page_size;
    uint64_t entries;     /* LMDB entries in all tables */
    unsigned max_readers, readers;
} ads_db_info;

/* Map and page figures of the store. ADS_ESTORAGE. */
int ads_db_info_get(ads_db_info *out, ads_db *db, ads_error *err);

#ifdef __cplusplus
}
#endif
#endif
