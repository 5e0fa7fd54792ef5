/*
 * base/limits.h: every limit adstore enforces, in one place (as SQLite keeps
 * its in sqliteLimit.h). Each is checked where input enters -- the parser,
 * the reader, the statement planner, the store call -- and going past one is
 * a clear error (ADS_ELIMIT, or the ClassAd value error where the language
 * says so), never a crash. docs/ lists them for users: classad.md (language),
 * storage.md (store), query.md (statements).
 */
#ifndef ADS_LIMITS_H
#define ADS_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* ---- the ClassAd language ---- */

/* Nesting of expressions (parse and evaluation, attribute chains included).
 * A flat chain of one binary operator (a || b || c ...) is one level however
 * long it is. */
#define ADS_MAX_DEPTH 400
/* The largest text parsed at once. */
#define ADS_MAX_TEXT ((size_t)1 << 30)
/* The JSON reader remembers the member names of the last record (and their
 * hashes) up to this many names and bytes of names; past them, names are
 * hashed as they come. */
#define ADS_JSON_NAME_MEMO_MAX 1024
#define ADS_JSON_NAME_MEMO_BYTES ((size_t)64 << 10)
/* The memos of recurring expressions (classad/expr_memo.c), which readers
 * and the MessagePack writer keep while loading: entries each memo holds (a
 * power of two), the largest tree (nodes) and text (bytes) remembered, and
 * the bytes a memo may hold before it forgets everything and starts again. */
#define ADS_EXPR_MEMO_SLOTS 64
#define ADS_EXPR_MEMO_NODES 256
#define ADS_EXPR_MEMO_TEXT_MAX 4096
#define ADS_EXPR_MEMO_BYTES ((size_t)256 << 10)
/* Attribute expressions one evaluation may evaluate (each reference counts
 * once per time it is followed): attributes that refer to each other in
 * layers (a0 = a1 + a1; a1 = a2 + a2; ...) would otherwise take time
 * exponential in the number of layers. Past it, references give error. */
#define ADS_MAX_ATTR_EVALS ((uint64_t)1 << 20)
/* One PCRE2 match: backtracking steps, nesting of backtracking points, and
 * the heap (KiB) that nesting may use. */
#define ADS_REGEX_MATCH_LIMIT 1000000u
#define ADS_REGEX_DEPTH_LIMIT 100000u
#define ADS_REGEX_HEAP_LIMIT_KIB 65536u
/* Compiled patterns each thread keeps (classad/regex.c), and the longest
 * pattern kept (longer ones are compiled per call); the patterns' text
 * takes their product in each thread's storage. */
#define ADS_REGEX_CACHE_ENTRIES 16
#define ADS_REGEX_CACHE_PATTERN_MAX 256u
/* Bytes of a record (or a row) evaluation asks the processor to load ahead
 * when it starts on it (classad/record.c): a record's block, a row's
 * bytes; beyond them, lines load as they are read. */
#define ADS_PREFETCH_MAX 8192u
/* A prepared expression's flat program (classad/program.c): values its
 * stack holds at once, and the nesting it covers (operators inside
 * operators); an expression needing more is evaluated as a tree. */
#define ADS_PROG_STACK 16
#define ADS_PROG_DEPTH 32
/* A blob's bytes (MessagePack bin32). */
#define ADS_MSGPACK_BLOB_MAX ((size_t)INT32_MAX)

/* ---- the store ---- */

/* Type names and attribute names, in bytes. */
#define ADS_MAX_NAME_LEN 200
/* A record key, encoded. */
#define ADS_KEY_MAX_LEN (1u << 20)
/* Generated keys tried for one record before giving up, when those
 * generated belong to existing records (stored with explicit keys). An
 * increment-keyed type skips at once past the greatest key it holds, so
 * only ordered and random keys could ever need more than two. */
#define ADS_MAX_KEYGEN_TRIES 1000u
/* Works of ads_db_write one group commit holds at most (the leader's
 * included): writers that queue while a commit is under way share the next
 * one; the cap bounds how long the first of them waits for the others. */
#define ADS_GROUP_COMMIT_MAX 64u
/* History rows a write removes from its record under HistoryRetention (the
 * rows that aged past the cut; a store that gained a retention catches up
 * over its next writes, or at once with PURGE HISTORY / adstore compact):
 * it bounds the work a retention adds to one write. */
#define ADS_RETENTION_TRIM_PER_WRITE 16u
/* A record's history rows are kept as differences from the nearest whole
 * row before them (engine/history.c); a row moving to history is kept whole
 * when this many rows since that one would otherwise be differences from
 * it, so that differences stay small as a record drifts from its keyframe. */
#define ADS_HISTORY_KEYFRAME_ROWS 16u
/* From store format 7 a record's history rows are kept in chunks, up to
 * this many consecutive rows in one history entry (engine/chunk.c): the
 * first whole, the rest as differences from it, their dates as steps. */
#define ADS_HISTORY_CHUNK_ROWS 32u
/* A chunk takes another row while it stays within this many bytes, so
 * that it and its key fit an LMDB leaf page of 4,096 bytes (whose largest
 * node is 2,038 bytes) and no chunk needs a page of its own; a chunk whose
 * first row alone is over half of it goes to overflow pages whatever it
 * holds, and fills ADS_HISTORY_CHUNK_PAGE-byte pages instead. */
#define ADS_HISTORY_CHUNK_BYTES 1800u
#define ADS_HISTORY_CHUNK_PAGE 4000u
/* Records of its type a write examines under HistoryRetention, from where
 * the type's last write stopped (in key order, wrapping around), removing
 * those deleted before the cut: it bounds the work of making deleted
 * records disappear as writes go. */
#define ADS_RETENTION_SWEEP_PER_WRITE 8u
/* An index entry's key (LMDB's key limit): a value whose entry would be
 * longer is kept with the entries every lookup reads (docs/indexes.md). */
#define ADS_INDEX_KEY_MAX 511u
/* Index entries the planner counts per term when it estimates which
 * index of an AND reads least (it stops at the smallest count so far). */
#define ADS_INDEX_ESTIMATE_MAX 100000u
/* Other indexes of an AND one index scan probes per record before reading
 * its row. */
#define ADS_INDEX_FILTERS_MAX 4
/* Attributes of one composite index (the Attribute record's ForName and
 * up to three more in its IndexWith), and their folded names' bytes
 * together (with a separator between each two): its registry key in meta
 * stays under LMDB's key limit. */
#define ADS_INDEX_ATTRS_MAX 4
#define ADS_INDEX_NAME_MAX 400
/* Value ranges a lookup through a composite index may read: the product of
 * the values its terms name per attribute (`in` of several on each). A
 * larger product leaves the later attributes to the WHERE. */
#define ADS_INDEX_PRODUCT_MAX 256
/* Reader slots of a store (LMDB's lock file holds one per reading
 * transaction across all processes). */
#define ADS_MAX_READERS 510
/* Attribute names a store's name table holds (engine/names.c): rows whose
 * names do not all fit keep them as strings. */
#define ADS_NAMES_MAX (1u << 20)
/* Application metadata (ads_txn_meta_put): key and value bytes. */
#define ADS_META_KEY_MAX 200
#define ADS_META_VALUE_MAX (64u * 1024u)

/* ---- statements ---- */

/* GROUP BY and ORDER BY expressions in one SELECT. */
#define ADS_MAX_GROUP_BY 64
#define ADS_MAX_ORDER_BY 64
/* Placeholders (? and :name) in one statement, and values in one
 * ads_params (query/query.h). */
#define ADS_MAX_PARAMS 256
/* Intervals one timeline aggregation may produce per group. */
#define ADS_MAX_INTERVALS 10000000
/* Attributes a timeline aggregation's WHERE and GROUP BY may read together
 * and still have their results kept from one row to the next while those
 * attributes' bytes stay the same (query/tlrecord.c); past it, every row
 * evaluates them. */
#define ADS_TL_MEMO_NAMES 16
/* What one statement may spend by default (ads_query_set_limits, adstore
 * execute --max-memory / --max-time): memory held by its arenas (rows being
 * evaluated, groups, sorted rows, strings it builds), and wall time. */
#define ADS_DEFAULT_STMT_MEMORY ((size_t)512 << 20)
#define ADS_DEFAULT_STMT_SECONDS 3600.0
/* Resident file-backed bytes of the process above which a bulk load drops
 * the store's mapped pages after a batch (madvise): the resident set stays
 * bounded whatever the number of rows, and a load whose pages fit does not
 * fault the whole map back in after every batch. */
#define ADS_BULK_RESIDENT_BYTES ((size_t)64 << 20)
/* ... but only once the load has committed this many bytes of rows: a
 * small load (a snapshot every minute) touches few pages, and dropping
 * them made the next load fault every one back in (a fifth of P10's CPU). */
#define ADS_BULK_DROP_MIN_BYTES ((size_t)16 << 20)
/* Compaction's copy (engine/repack.c): bytes of keys and rows written per
 * transaction of the copy (its dirty pages, held until the commit), the
 * tables an environment may hold, and the length of a table's name. */
#define ADS_REPACK_TXN_BYTES ((size_t)16 << 20)
#define ADS_REPACK_TABLES 8
#define ADS_REPACK_NAME_MAX 64
/* ads_db_layout_get reads this many entries of a table at most; adstore
 * import compacts the store after it when it stored at least
 * ADS_IMPORT_COMPACT_ROWS rows, they are at least half of the store's rows,
 * and a table's sampled pages (at least ADS_LAYOUT_MIN_PAGES) are less than
 * ADS_LAYOUT_FILL_MIN full or fewer than ADS_LAYOUT_ORDER_MIN of its page
 * steps go forward. */
#define ADS_LAYOUT_SAMPLE 200000u
#define ADS_IMPORT_COMPACT_ROWS 100000u
#define ADS_LAYOUT_FILL_MIN 0.80
#define ADS_LAYOUT_ORDER_MIN 0.50
/* a table sampled in fewer leaf pages is too small for its layout to matter */
#define ADS_LAYOUT_MIN_PAGES 64u
/* A sorted load (engine/stage.c, `adstore import` of a large file): rows
 * are collected in memory up to ADS_STAGE_RUN_BYTES, sorted by key and
 * spilled as a run to a temporary file beside the store; at most
 * ADS_STAGE_MERGE_WAYS runs are merged at once (more are first merged into
 * one, a pass over their bytes). An import sorts a file of at least
 * ADS_IMPORT_SORT_MIN_BYTES unless told not to. */
#define ADS_STAGE_RUN_BYTES ((size_t)16 << 20)
#define ADS_STAGE_MERGE_WAYS 64u
#define ADS_STAGE_READ_BUFFER ((size_t)64 << 10)
#define ADS_IMPORT_SORT_MIN_BYTES ((uint64_t)16 << 20)
/* A sorted load gives the names of its records' new shapes attribute ids
 * (a write transaction) at its first record, and then at most every
 * ADS_STAGE_IDS_EVERY records (twice as many after each try that gives
 * none). */
#define ADS_STAGE_IDS_EVERY ((uint64_t)16)
/* The buffer `adstore import` reads its input files through. */
#define ADS_IMPORT_READ_BUFFER ((size_t)1 << 20)

/* The Python module (python/adstore): rows a Cursor takes at once (a
 * streaming SELECT's ads_stmt_fetch without the GIL), or that the worker
 * of any other SELECT converts before it hands them to the iterating
 * thread and waits (what a SELECT holds in Python at most, twice);
 * attribute names and short string values a Cursor keeps as str objects,
 * so rows of the same shape share them (a power of two), the longest name
 * kept and the longest string value; problems ads_db_verify reports that
 * Store.verify keeps as messages (it counts them all). */
#define ADS_PY_CURSOR_BATCH 512
#define ADS_PY_NAME_CACHE 256
#define ADS_PY_NAME_CACHE_LEN 64
#define ADS_PY_VALUE_CACHE_LEN 32
#define ADS_PY_VERIFY_MESSAGES_MAX 1000

/* Rows a csv or tabular writer holds before it writes: tabular measures
 * its column widths on the first rows (later wider values are written
 * whole, past the alignment), and csv of SELECT * over rows that carry no
 * column list (no FROM, USING) takes its columns from them. Memory is so
 * bounded by this many rows, not by the row count. */
#define ADS_WRITER_SAMPLE_ROWS 1000u

/* ---- adstore serve (server/) ---- */

/* Bytes of one request body (a statement, records, an imported file): a
 * larger body is refused with 413 before it is read whole. */
#define ADS_SERVE_MAX_BODY ((size_t)8 << 20)
/* Bytes of request bodies the server holds at once, all connections
 * together: a request whose body would pass it is refused with 503 (try
 * again), so bodies in flight never hold more memory than this. */
#define ADS_SERVE_BODY_MEMORY ((size_t)64 << 20)
/* Connections served at once (a thread each), and from one client address:
 * a connection over either is closed at once. With ADS_SERVE_MAX_BODY this
 * bounds request memory; the second keeps one host from taking them all. */
#define ADS_SERVE_MAX_CONNECTIONS 256u
#define ADS_SERVE_MAX_PER_IP 64u
/* Bytes libmicrohttpd gives each connection for a request's line and
 * headers and its answer's headers (libmicrohttpd's default is 32 KiB): a
 * request whose line and headers do not fit is refused (414 or 431). It
 * zeroes this memory for every request, so it is kept to what a request
 * needs: a point read costs less with it. */
#define ADS_SERVE_CONN_MEMORY ((size_t)16 << 10)
/* Seconds a connection may sit idle (reading nothing, sending nothing)
 * before it is closed: a slow client cannot hold a thread for ever. */
#define ADS_SERVE_CONN_TIMEOUT 30u
/* What one statement run over HTTP may spend: wall time, memory held for
 * it (ads_query_set_limits) and rows returned. */
#define ADS_SERVE_STMT_SECONDS 60.0
#define ADS_SERVE_STMT_MEMORY ((size_t)256 << 20)
#define ADS_SERVE_MAX_ROWS 1000000u
/* Threads that run statements (server/pool.c): this many wait from the
 * start; more are started while all are busy (one statement per
 * connection at most), and those leave after this many idle seconds. */
#define ADS_SERVE_STMT_THREADS 4u
#define ADS_SERVE_STMT_IDLE_SECONDS 10
/* Bytes of a statement's output held before the response starts: a
 * statement that fails within them gets an error status and object, one
 * that goes on is streamed. */
#define ADS_SERVE_HEAD_BYTES ((size_t)64 << 10)
/* Key attributes a record read (GET /api/records/TYPE?KEY=VALUE) looks up
 * in the store directly; a type with more keys is read by a statement. */
#define ADS_SERVE_POINT_KEYS 16u
/* Identifiers one POST /api/ids may ask for. */
#define ADS_SERVE_MAX_IDS 10000u
/* Seconds a shutdown waits for requests in flight before it interrupts
 * their statements. */
#define ADS_SERVE_DRAIN_SECONDS 30.0
/* The request log is written when no request is in flight, or once it
 * holds this many bytes, or its first line is this many seconds old. */
#define ADS_SERVE_LOG_BYTES ((size_t)16 << 10)
#define ADS_SERVE_LOG_SECONDS 1.0
/* Entries in a tokens file, and bytes of one of its lines. */
#define ADS_SERVE_MAX_TOKENS 1000u
#define ADS_SERVE_TOKEN_LINE 512u

#endif
