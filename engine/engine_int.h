/*
 * engine/engine_int.h: what the files of the engine share and no other
 * module may include: the store and transaction structures, the on-disk
 * layout (tables, key encoding, row envelope), the type cache, and the
 * helpers the files call across.
 *
 * On disk (docs/storage.md has the why):
 *   meta     small records: format, node, generator state, counters, type ids
 *   latest   record key -> the record's latest row
 *   history  record key ++ sortable(_Timestamp) ++ be64(__SystemTimestamp)
 *            -> an earlier row (every row that is not latest)
 *   index    be32(index id) ++ value ++ record key's rest -> be16 offset
 *            (secondary indexes of latest rows: engine/index.c)
 *   names    be32(attribute id) -> the attribute name (engine/names.c)
 *   bases    record key -> the keyframe of the record's first history rows,
 *            when retention removed it (engine/history.c)
 * A record key is be32(type id) ++ the key attribute values, each in an
 * order-preserving encoding normalised as `===` compares (key.c). A row is an
 * envelope (checksum, flags, the timeline attributes: row.c; 23 bytes in
 * UTC, 7 for a history difference, 32 in stores before format 6) followed
 * by the record's canonical MessagePack row (classad/msgpack.h), its
 * attributes named by ids of the `names` table (classad/msgpack_int.h).
 */
#ifndef ADS_ENGINE_INT_H
#define ADS_ENGINE_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>

#include "base/buf.h"
#include "base/limits.h"
#include "classad/msgpack_int.h"
#include "engine/engine.h"

/* ---- tables and meta keys ---- */

#define ADS_META_FORMAT "format"
#define ADS_META_NODE "node"
#define ADS_META_IDGEN "idgen"
#define ADS_META_LUID "luid"
#define ADS_META_SYSTS "systs"           /* i64: last __SystemTimestamp issued (us) */
#define ADS_META_TYPES_TOKEN "gen/types" /* u64: changes whenever a Type record does */
#define ADS_META_ATTRS_TOKEN "gen/attrs" /* u64: changes when Attribute records vanish */
#define ADS_META_TYPEID_NEXT "typeid.next"
#define ADS_META_TYPEID_PREFIX "typeid/"   /* folded type name -> be32 id */
#define ADS_META_TYPENAME_PREFIX "typename/" /* be32 id -> folded type name */
#define ADS_META_COUNT_PREFIX "count/"     /* be32 id -> records, deleted, history (3 x u64) */
#define ADS_META_SEQ_PREFIX "seq/"         /* folded sequence name -> u64 counter */
#define ADS_META_APP_PREFIX "app/"         /* application metadata */

/* Built-in type ids; declared types are numbered from ADS_TYPEID_FIRST. */
enum { ADS_TYPEID_TYPE = 1, ADS_TYPEID_ATTRIBUTE = 2, ADS_TYPEID_SEQUENCE = 3 };
#define ADS_TYPEID_FIRST 16u

/* ---- record keys (key.c) ---- */

/* Encoded keys up to this many bytes are stored as they are; longer ones as
 * their first ADS_KEY_PREFIX bytes, a 128-bit hash of the whole, and a
 * collision counter (the whole key is then kept in the row envelope). With
 * the 16 bytes of a history suffix, every stored key fits LMDB's 511. */
#define ADS_KEY_INLINE_MAX 400
#define ADS_KEY_PREFIX 380
#define ADS_KEY_LONG_LEN (ADS_KEY_PREFIX + 16 + 1)

/* Key value tags, in the order values of different kinds sort. */
enum {
    KEY_END = 0x00,
    KEY_NUMBER = 0x10,
    KEY_STRING = 0x20,
    KEY_ABSTIME = 0x30,
    KEY_RELTIME = 0x31,
    KEY_IDENT = 0x40,
    KEY_BLOB = 0x50,
    KEY_LIST = 0x60,
    KEY_RECORD = 0x70
};

/* Append the encoding of v (a key attribute's value) to b. Errors:
 * ADS_EINVAL (undefined, error or NaN cannot be keys: the message says
 * which, and names `what`), ADS_ELIMIT (nesting), ADS_ENOMEM. */
int ads_key__value(ads_buf *b, const ads_value *v, const char *what, ads_error *err);

/* Append be32(id). */
void ads_key__typeid(ads_buf *b, uint32_t id);
uint32_t ads_key__get_typeid(const unsigned char *key);

/* 8 bytes that sort as the double d does (-0.0 as 0.0; NaN not allowed). */
void ads_key__sortable_double(unsigned char out[8], double d);
double ads_key__double_of_sortable(const unsigned char in[8]);

/* Check a key as stored (skey, slen: a latest key, or a history key with
 * its 16-byte suffix) against its row: it frames whole key values after the
 * type id (or, for a long key, is the stored form of the row's whole key
 * full), and a history key ends in the row's ts and systs. 0 or -1. */
int ads_key__check_stored(const unsigned char *skey, size_t slen, const unsigned char *full,
                          size_t full_len, double ts, int64_t systs);
/* The part of that for a history key: it ends in ts and systs. 0 or -1. */
int ads_key__check_dates(const unsigned char *skey, size_t slen, double ts, int64_t systs);

/* Store a full record key: either as is, or in the long form with
 * collision counter c. out must hold ADS_KEY_INLINE_MAX bytes. Returns the
 * stored length. */
size_t ads_key__stored(unsigned char *out, const unsigned char *full, size_t len, unsigned c);

/* The key values of encoded key (len bytes, type id first) as text for a
 * message, cut to cap bytes; decoded values live in a. */
void ads_key__text(char *out, size_t cap, const unsigned char *key, size_t len, ads_arena *a);

/* The value of one encoded key value at p (ending before end): decoded into
 * arena a (strings come back folded: keys keep only what `===` compares).
 * Returns bytes consumed or a negative code. */
long ads_key__decode_value(ads_value *out, const unsigned char *p, const unsigned char *end,
                           ads_arena *a, int depth);

/* ---- row envelope (row.c) ---- */

#define ADS_ROW_HEADER 32      /* envelope version 1's size (dumps, stores before format 6) */
#define ADS_ROW_VERSION 2      /* the packed envelope a store writes */
#define ADS_ROW_VERSION_DUMP 1 /* the 32-byte envelope of dumps */
/* Flags of an envelope; ROW_KEYDATES (version 2 only) is the envelope's own
 * business: row_env.flags never holds it. */
enum { ROW_DELETED = 1, ROW_LONGKEY = 2, ROW_DELTA = 4, ROW_KEYDATES = 8 };

/* The parts of a stored row. */
typedef struct row_env {
    unsigned flags;
    double ts;
    int32_t offset;
    int64_t systs;
    const unsigned char *full_key; /* ROW_LONGKEY: the whole record key */
    size_t full_key_len;
    const unsigned char *data;     /* the MessagePack row (ROW_DELTA: history.c's form) */
    size_t len;
    uint32_t sum;                  /* the stored checksum (0 for a row not read) */
} row_env;

/* A row's checksum of bytes p[0..len): the low 32 bits of XXH3-64 (on
 * x86-64 with AVX2, rows over 240 bytes are hashed with AVX2: the same
 * value). */
uint32_t ads_row__checksum(const unsigned char *p, size_t len);
/* The same seeded with the 16 date bytes at the end of a history key (the
 * checksum of a row or chunk whose dates are its key's). */
uint32_t ads_row__checksum_dated(const unsigned char *p, size_t len, const unsigned char *dates);

/* Append a stored row: envelope (version 2) then data, with its checksum.
 * skey is the key it is stored under: with ROW_KEYDATES in flags, a history
 * key that ends in exactly these dates lets the row leave them out (the
 * flag is dropped when it does not, or for -0.0). */
void ads_row__build(ads_buf *out, const unsigned char *skey, size_t skey_len, unsigned flags,
                    double ts, int32_t offset, int64_t systs, const unsigned char *full_key,
                    size_t full_key_len, const unsigned char *data, size_t len);
/* The same row as a dump holds it: envelope version 1. */
void ads_row__build_dump(ads_buf *out, const unsigned char *skey, size_t skey_len,
                         unsigned flags, double ts, int32_t offset, int64_t systs,
                         const unsigned char *full_key, size_t full_key_len,
                         const unsigned char *data, size_t len);

/* Check and split a stored row (value v under stored key skey). ADS_ECORRUPT
 * with a message naming `where` (e.g. "latest row of type Machine"). */
int ads_row__parse(row_env *out, const unsigned char *skey, size_t skey_len,
                   const unsigned char *v, size_t vlen, const char *where, ads_error *err);
/* The same for a row that ads_store__find found under the stored key it
 * made of the record key: such a key frames key values by construction, so
 * of the key only a long one (the row's whole key against its prefix and
 * hash) is checked. */
int ads_row__parse_found(row_env *out, const unsigned char *skey, size_t skey_len,
                         const unsigned char *v, size_t vlen, const char *where, ads_error *err);
/* The same for a history row whose key begins with a latest key already
 * checked (the caller compared the first skey_len - 16 bytes with it): of
 * the key, only the dates at its end are checked (a long key, all of it). */
int ads_row__parse_history(row_env *out, const unsigned char *skey, size_t skey_len,
                           const unsigned char *v, size_t vlen, const char *where,
                           ads_error *err);


/* The flags (ROW_*) and _Timestamp of stored row v under skey, whichever
 * its envelope, read without its checksum: for a pre-filter whose caller
 * parses the row before acting on it. false when v is no row's envelope. */
bool ads_row__peek(const unsigned char *skey, size_t skey_len, const unsigned char *v,
                   size_t vlen, unsigned *flags, double *ts);

/* Does stored key skey frame key values as its row v says (what
 * ads_row__parse checks of the key), whether or not the row's checksum
 * holds? For walks checking a key that belongs to another record. */
bool ads_row__key_sound(const unsigned char *skey, size_t skey_len, const unsigned char *v,
                        size_t vlen);

/* Fill an ads_row from a parsed envelope read in txn. */
void ads_row__fill(ads_row *row, ads_txn *txn, const ads_type *t, const unsigned char *skey,
                   size_t skey_len, const row_env *e, bool latest, ads_arena *a);


/* ---- history rows kept as differences (history.c) ----
 *
 * A history row flagged ROW_DELTA holds, where a whole row holds its
 * MessagePack row, the checksum of its keyframe (4 bytes, little-endian:
 * the first 4 bytes of that row's stored value) and the difference of its
 * row from the keyframe's (ads_msgpack__delta). Its keyframe is the nearest
 * whole row before it in the same record's history, or, for the rows before
 * the first whole one, the record's base: the keyframe retention removed
 * from the history and kept in `bases`. The latest row is always whole. */

#define ADS_HIST_REF 4

/* ADS_HISTORY_KEYFRAME_ROWS, or ADSTORE_TEST_KEYFRAME_ROWS's value (2..255)
 * when that is set (tests reach the keyframe rules in a few writes). */
unsigned ads_hist__keyframe_rows(void);

/* Put the history row (envelope fields, the MessagePack row data) of the
 * record at stored key skey (slen bytes) under history key hkey (slen + 16
 * bytes): as a difference from its keyframe where that is smaller, or
 * whole. Rows after it that the change of keyframe concerns are written
 * again. scratch and base are the caller's buffers. */
int ads_hist__put(ads_txn *txn, const unsigned char *hkey, size_t slen, unsigned flags, double ts,
                  int32_t offset, int64_t systs, const unsigned char *full_key,
                  size_t full_key_len, const unsigned char *data, size_t len, ads_buf *scratch,
                  ads_buf *base, ads_error *err);

/* Before retention removes the history rows of the record at skey (slen
 * bytes) that come before kept (its first row kept, slen + 16 bytes; NULL:
 * none is kept): when kept is a difference whose keyframe is among the rows
 * that go, that keyframe becomes the record's base (table `bases`); when no
 * difference is left to need it, the base goes. */
int ads_hist__trim(ads_txn *txn, const unsigned char *skey, size_t slen,
                   const unsigned char *kept, ads_error *err);
/* The record at skey is purged: its base goes too. */
int ads_hist__purge(ads_txn *txn, const unsigned char *skey, size_t slen, ads_error *err);

/* The row of env, a history row parsed at hkey (hklen bytes), made whole
 * into out if it is a difference (env->data, env->len then point into out
 * and ROW_DELTA is cleared); its keyframe found in txn. */
int ads_hist__resolve(ads_txn *txn, const unsigned char *hkey, size_t hklen, row_env *env,
                      ads_buf *out, const char *where, ads_error *err);

/* The keyframe of a row at history key hkey (slen + 16 bytes; the row may
 * not be there yet): the nearest whole row of the record before it, or the
 * record's base when there is none, parsed into *kf (its data LMDB's, valid
 * until txn writes). 1, 0 when the record has none, or an error. */
int ads_hist__keyframe(ads_txn *txn, const unsigned char *hkey, size_t slen, row_env *kf,
                       const char *where, ads_error *err);

/* A difference's row made whole from its keyframe's row (kf, kflen bytes:
 * the keyframe's MessagePack row) whose stored value began with the
 * checksum kf_sum, into out; env->data, env->len then point into out and
 * ROW_DELTA is cleared. ADS_ECORRUPT when the difference names another
 * keyframe or does not fit this one. */
int ads_hist__apply(row_env *env, uint32_t kf_sum, const unsigned char *kf, size_t kflen,
                    ads_buf *out, const char *where, ads_error *err);

/* A walk through history rows in key order (scans, dumps, verify): the
 * last whole row seen is the keyframe of the differences after it. */
typedef struct ads_hist_walk {
    unsigned char rec[ADS_KEY_INLINE_MAX]; /* the keyframe's record (stored key) */
    size_t rlen;                           /* 0: no keyframe */
    const unsigned char *kf;               /* its row: LMDB's, or in copy */
    size_t kflen;
    uint32_t sum;
    ads_buf copy, out;
} ads_hist_walk;

/* Note env, the history row parsed at hkey (hklen bytes): a whole row
 * becomes the keyframe (copied when copy is set: the walk's transaction
 * writes between rows); a difference is made whole into w->out (valid until
 * the next call), from the walk's keyframe or one found in txn. */
int ads_hist__walk(ads_hist_walk *w, ads_txn *txn, const unsigned char *hkey, size_t hklen,
                   row_env *env, bool copy, const char *where, ads_error *err);
void ads_hist__walk_free(ads_hist_walk *w);

/* ---- history chunks (chunk.c) ----
 *
 * From store format 7 a history entry may be a chunk: up to
 * ADS_HISTORY_CHUNK_ROWS consecutive history rows of one record, under the
 * history key of its first row. Its keyframe is row 0, whole, or the base a
 * trim kept; the rows are whole or (ROW_DELTA) their difference from the
 * keyframe (ads_msgpack__delta, with no keyframe checksum before it: the
 * keyframe is in the same value). Each row's
 * dates are steps from the row before it, and one checksum covers the whole
 * chunk and the dates in its key. docs/storage.md, "History chunks". */

#define ADS_ROW_VERSION_CHUNK 3

/* One row of a chunk as read: data is whole, or ROW_DELTA's steps. */
typedef struct chunk_row {
    unsigned flags; /* ROW_DELETED, ROW_DELTA */
    double ts;
    int32_t offset;
    int64_t systs;
    const unsigned char *data;
    size_t len;
} chunk_row;

typedef struct ads_chunk {
    uint32_t sum;
    const unsigned char *full_key; /* a long key's whole record key, or NULL */
    size_t full_key_len;
    const unsigned char *base;     /* the keyframe of its differences: row 0's data, */
    size_t base_len;               /* or the base a trim kept (has_base) */
    bool has_base;
    size_t row0_bytes; /* the bytes up to its keyframe's end (its limit depends on them) */
    size_t bytes;      /* the whole chunk's */
    unsigned n;
    chunk_row rows[ADS_HISTORY_CHUNK_ROWS];
    size_t at[ADS_HISTORY_CHUNK_ROWS]; /* where each row's encoding begins */
} ads_chunk;

/* Is stored history value v (vlen bytes) a chunk rather than one row? */
bool ads_chunk__is(const unsigned char *v, size_t vlen);

/* Check and split the chunk v (vlen bytes) stored under history key hkey
 * (hklen bytes: a record's stored key and row 0's dates) into *c, whose
 * pointers are v's. ADS_ECORRUPT naming `where`. */
int ads_chunk__parse(ads_chunk *c, const unsigned char *hkey, size_t hklen,
                     const unsigned char *v, size_t vlen, const char *where, ads_error *err);

/* A chunk row's difference (steps, len bytes) applied to its chunk's row 0
 * (row0, row0_len bytes), into out (cleared first). */
int ads_chunk__undelta(const unsigned char *steps, size_t len, const unsigned char *row0,
                       size_t row0_len, ads_buf *out, const char *where, ads_error *err);

/* Does chunk v frame its rows and is its key sound (ads_row__key_sound),
 * whether or not its checksum holds? */
bool ads_chunk__key_sound(const unsigned char *hkey, size_t hklen, const unsigned char *v,
                          size_t vlen);

/* Row i of c made whole: its data when it is, or row 0's with its
 * difference applied, into out. *data, *len the row's MessagePack. */
int ads_chunk__row(const ads_chunk *c, unsigned i, ads_buf *out, const unsigned char **data,
                   size_t *len, const char *where, ads_error *err);

/* The chunk of rows[0..n) (whole rows, in increasing order of their dates,
 * rows[0]'s being hkey's last 16 bytes) into out (cleared first), with the
 * record's whole key full_key when it is a long one (else NULL); scratch is
 * the caller's. ADS_ENOMEM. */
int ads_chunk__build(ads_buf *out, const unsigned char *hkey, size_t hklen,
                     const unsigned char *full_key, size_t full_key_len, const chunk_row *rows,
                     unsigned n, ads_buf *scratch, ads_error *err);

/* The chunk of as many of rows[0..n) as one takes (max_rows at most, and
 * its byte limit: what ads_chunk__append would take of them one by one)
 * into out, cleared first; *taken how many (1 at least). ADS_ENOMEM. */
int ads_chunk__fill(ads_buf *out, const unsigned char *hkey, size_t hklen,
                    const unsigned char *full_key, size_t full_key_len, const chunk_row *rows,
                    size_t n, unsigned max_rows, ads_buf *scratch, unsigned *taken,
                    ads_error *err);

/* The chunk c (parsed from v, vlen bytes, under hkey) with the whole row r
 * after its last row, into out (cleared first): 1 when it fits (fewer than
 * max_rows rows, at most ADS_HISTORY_CHUNK_ROWS, within its byte limit), 0
 * when it does not (out then undefined), or ADS_ENOMEM. r's dates must come
 * after the last row's. */
int ads_chunk__append(ads_buf *out, const ads_chunk *c, const unsigned char *v, size_t vlen,
                      const unsigned char *hkey, size_t hklen, const chunk_row *r,
                      unsigned max_rows, ads_buf *scratch, ads_error *err);

/* ADS_HISTORY_CHUNK_ROWS, or ADSTORE_TEST_CHUNK_ROWS's value (1..32) when
 * that is set (tests put chunk boundaries everywhere). */
unsigned ads_chunk__max_rows(void);

/* Chunk c (parsed from v, vlen bytes) without its rows before row `from`
 * (1..n-1), under hkey (row from's history key), into out (cleared first):
 * its keyframe kept as the chunk's base, the rows after row from as they
 * were. ADS_ENOMEM. */
int ads_chunk__cut(ads_buf *out, const ads_chunk *c, const unsigned char *v, size_t vlen,
                   unsigned from, const unsigned char *hkey, size_t hklen, ads_error *err);

/* The rows a history entry holds: a chunk's count (not checked), or 1. */
unsigned ads_chunk__rows(const unsigned char *v, size_t vlen);

/* ---- writing history in chunks (hput.c) ---- */

/* Put the history row re (whole) of the record at stored key hkey's first
 * slen bytes under history key hkey (slen + 16 bytes): into the record's
 * chunk it falls in or after, or a chunk of its own; a row at the same
 * dates is replaced. A record kept one row per entry is turned into chunks
 * first. scratch and out are the caller's buffers. */
int ads_hput__row(ads_txn *txn, const unsigned char *hkey, size_t slen, const row_env *re,
                  ads_buf *scratch, ads_buf *out, ads_error *err);
/* Remove the first go history rows of the record at skey (slen bytes),
 * whose history is in chunks. */
int ads_hput__trim(ads_txn *txn, const unsigned char *skey, size_t slen, uint64_t go,
                   ads_error *err);

/* The bytes a chunk whose row 0 took row0_bytes may grow to. */
size_t ads_chunk__limit(size_t row0_bytes);

/* ---- a cursor over history rows of either form (hrows.c) ----
 *
 * Rows in key order with their history keys, whether an entry holds one row
 * or a chunk of them. The moves give 1 on a row, 0 when there is none (the
 * cursor is then off the table until a seek), or an error. */
typedef struct ads_hrows {
    ads_txn *txn;
    MDB_cursor *c;
    MDB_val ek, ev; /* the entry under the cursor (LMDB's memory) */
    MDB_val k;      /* the current row's history key: ek's, or key's */
    bool valid;     /* on a row */
    bool chunk;     /* the entry is a chunk (ch), the row its row i */
    bool parsed;    /* ch holds the chunk (parsed when a row past its first is wanted) */
    bool bad;       /* the entry under the cursor is a chunk that did not read */
    unsigned i;
    ads_chunk ch;
    unsigned char key[ADS_KEY_INLINE_MAX + 16];
    ads_hist_walk walk; /* the keyframe of one-row entries kept as differences */
    ads_buf out;        /* a row made whole */
} ads_hrows;

void ads_hrows__init(ads_hrows *h);
int ads_hrows__open(ads_hrows *h, ads_txn *txn, ads_error *err);
void ads_hrows__close(ads_hrows *h);
int ads_hrows__first(ads_hrows *h, ads_error *err);
int ads_hrows__last(ads_hrows *h, ads_error *err);
int ads_hrows__next(ads_hrows *h, ads_error *err);
int ads_hrows__prev(ads_hrows *h, ads_error *err);
/* On from the entry under the cursor (one that did not read: h->bad) to
 * the first row of the next (salvage). */
int ads_hrows__next_entry(ads_hrows *h, ads_error *err);
/* The first row whose key is >= key (len bytes), or > key when strict. */
int ads_hrows__seek(ads_hrows *h, const unsigned char *key, size_t len, bool strict,
                    ads_error *err);
/* The last row whose key is < key. */
int ads_hrows__before(ads_hrows *h, const unsigned char *key, size_t len, ads_error *err);
/* The current row, parsed and whole (its data valid until the cursor moves
 * or its transaction writes; a row kept as a difference is made whole from
 * its keyframe). ADS_ECORRUPT naming `where`. */
int ads_hrows__row(ads_hrows *h, row_env *env, const char *where, ads_error *err);
/* The chunk under the cursor (h->chunk) read into h->ch, if not yet. */
int ads_hrows__parse(ads_hrows *h, ads_error *err);

/* Entries of a canonical MessagePack row: raw bytes of name and value. */
typedef struct row_entry {
    const unsigned char *name; /* the name's bytes */
    size_t name_len;
    const unsigned char *raw;  /* the whole entry: key (name or id), value */
    size_t raw_len;
    const unsigned char *value; /* the value's bytes (inside raw) */
    size_t value_len;
    uint64_t id; /* the name's attribute id when known, else ADS_ROW_NO_ID */
} row_entry;

#define ADS_ROW_NO_ID UINT64_MAX

/* The entries of the row at data (len bytes, read through names: a stored
 * row, whose entries then carry their ids), in stored order, into *out
 * (allocated in arena a). ADS_ECORRUPT, ADS_EVERSION, ADS_ENOMEM. */
int ads_row__entries(row_entry **out, size_t *n, const unsigned char *data, size_t len,
                     const ads_msgpack_names *names, ads_arena *a, ads_error *err);

/* Build a canonical row from entries sorted by folded name and distinct:
 * with names (as the encoders write it), or with ids (every entry's id set:
 * the bytes ads_names__encode makes of the row with names). */
int ads_row__from_entries(ads_buf *out, const row_entry *e, size_t n, bool ids, ads_error *err);

/* The stored row env (parsed under skey: ads_row__parse) appended to out
 * with its row's attributes named by ids (a row of the dump's form made the
 * store's, new names taking ids in txn, a write transaction; a name over
 * ADS_MAX_NAME_LEN is refused, ADS_ELIMIT, as the store's write path would,
 * which restore's rows do not take) or by names
 * (the store's form made the dump's); the envelope the store's (version 2)
 * or the dump's (version 1), the checksum made anew. scratch holds
 * the rewritten row on the way (cleared first; a caller converting many
 * rows keeps it, and out, so that neither is allocated again per row).
 * Errors: ADS_ECORRUPT, ADS_ENOMEM, and those of ads_names__encode. */
int ads_row__to_ids(ads_buf *out, ads_buf *scratch, ads_txn *txn, const unsigned char *skey,
                    size_t skey_len, const row_env *env, ads_error *err);
int ads_row__to_names(ads_buf *out, ads_buf *scratch, ads_txn *txn, const unsigned char *skey,
                      size_t skey_len, const row_env *env, ads_error *err);

/* Case-insensitive compare of names as rows sort them. */
int ads_row__name_cmp(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen);

/* ---- types (types.c) ---- */

/* A secondary index of a type (engine/index.c). */
typedef struct index_def {
    uint32_t id;      /* its entries' prefix in the index table */
    const char *name; /* for messages: the attribute, folded, or a composite
                       * index's attributes as "(a, b)" */
    size_t len;
    const char *reg;  /* its registry name: the folded attributes, a 0 byte
                       * between each two */
    size_t reglen;
    size_t nattrs;    /* 1, or more for a composite index */
    const char *attr[ADS_INDEX_ATTRS_MAX]; /* each folded, in reg */
    size_t alen[ADS_INDEX_ATTRS_MAX];
} index_def;

struct ads_type {
    uint32_t id;
    char *name;        /* as declared */
    char *folded;      /* lower case */
    size_t nkeys;
    ads_str *keys;
    bool keyless, autogen, builtin;
    ads_id_kind method;
    double retention;  /* HistoryRetention in seconds; 0: keep all history */
    bool keep_unchanged; /* KeepUnchangedRows: a store equal to the row in effect appends anyway */
    ads_hooks hooks;   /* copied from the store's hook table when built */
    bool has_hooks;
    index_def *indexes; /* its secondary indexes */
    size_t nindexes;
};

/* A generation of type information: everything known under one value of
 * the types token. Shared by the transactions that see that token; pinned by
 * each while in use. */
typedef struct type_gen type_gen;

/* Attribute names known to have Attribute records. */
typedef struct attr_set attr_set;

/* A writer in ads_db_write's queue (group.c). */
typedef struct group_writer group_writer;

typedef struct hook_entry {
    char *folded;
    ads_hooks hooks;
} hook_entry;

/* The attribute-name table in memory (engine/names.c). */
typedef struct ads_names ads_names;

struct ads_db {
    MDB_env *env;
    MDB_dbi meta, latest, history, index;
    MDB_dbi bases; /* keyframes of trimmed histories (history.c; 0: none in a read-only store) */
    _Atomic MDB_dbi names_dbi; /* the attribute-name table (0: none yet, names_late) */
    bool names_late;         /* opened read-only on a store without the table: it is read
                              * in transactions of names.c's own (names.c, load_own) */
    ads_names *names;
    uint64_t node;
    int flags;
    unsigned keyframe_rows; /* ADS_HISTORY_KEYFRAME_ROWS, or a test's (history.c) */
    bool history_rows;      /* write one history row per entry (ADSTORE_TEST_HISTORY_ROWS) */
    unsigned chunk_rows;    /* rows a history chunk takes (ads_chunk__max_rows) */
    ads_clock clock;
    pthread_rwlock_t resize; /* transactions hold it shared; growing the map, exclusive */
    atomic_uint grown;       /* times this handle changed the map's size */
    _Atomic uint64_t write_roots; /* LMDB write transactions begun (names.c tells them apart) */
    pthread_mutex_t lock;    /* the caches below, and open_txns */
    size_t open_txns;        /* transactions begun and not yet ended */
    type_gen *gens;          /* list of type generations */
    attr_set *attrs;         /* known attribute names (one token's worth) */
    ads_msgpack_order *bulk_shapes; /* row shapes whose names bulk loads know ids of */
    hook_entry *hooks;
    size_t nhooks;
    /* group commit of ads_db_write (group.c) */
    pthread_mutex_t group_lock; /* the fields below */
    bool group_busy;            /* a leader is running a group */
    group_writer *group_head, *group_tail; /* writers waiting, in arrival order */
    MDB_txn *group_root;        /* the running group's root, for the member at work */
};

/* A pending counter change of one type within a transaction. */
typedef struct count_delta {
    uint32_t id;
    int64_t records, deleted, history;
} count_delta;

/* A cached piece of generator state in meta (a counter, FLUID or k-ordered
 * generator state), read at first use and written back at commit, or at
 * abort so that values handed out are never handed out again. */
#define ADS_META_CACHE_MAX 32
typedef struct seq_cache {
    char *key;
    unsigned char val[ADS_META_CACHE_MAX];
    size_t len; /* 0: absent */
    bool dirty;
} seq_cache;

struct ads_txn {
    ads_db *db;
    ads_msgpack_names nm; /* resolves the attribute ids of rows this transaction reads */
    ads_msgpack_names given_nm; /* ... and of a bulk load's rows given to it (names.c) */
    bool names_synced;    /* a write that looked names up (names.c, sync_writer) */
    uint32_t names_base;  /* the first id this transaction may have added */
    uint64_t names_root;  /* the LMDB write transaction it belongs to (0: a reader) */
    MDB_txn *txn;    /* where reads and writes go: for a write, a child of parent */
    MDB_txn *parent; /* write transactions: holds what survives an abort */
    bool readonly;
    bool nested;     /* a group member's: parent is nested in the group's root, and
                        the transaction holds no resize lock (the root does) */
    bool broken;   /* a write failed after changing the store (map full, out of
                      memory half way): only abort is left, as LMDB's
                      MDB_TXN_ERROR */
    int broken_rc;
    uint64_t writes; /* LMDB puts and deletes tried (a failed call that changed
                        something marks the transaction broken) */
    ads_arena *arena; /* lives as long as the transaction */
    ads_buf kbuf, vbuf, tmp; /* scratch buffers for keys and rows */
    /* per nesting level of writes (a store may store an Attribute record) */
    struct write_scratch {
        ads_arena *a;
        ads_buf full, merged, oldrow, newrow, ids, hist, base;
    } ws[4];
    int wdepth;
    /* the greatest key in `latest` as far as this transaction knows: a new
     * key above it cannot exist and is appended without a search */
    ads_buf last_key;
    bool last_known;

    /* lazily read, written back at commit */
    bool idgen_loaded, idgen_dirty;
    ads_idgen_state idgen;
    bool systs_loaded, systs_dirty;
    int64_t systs;
    bool now_read; /* the clock is read once per transaction */
    bool rows_raised; /* the store's format allows the packed envelope (and differences) */
    bool chunks_raised; /* ... and history chunks (format 7) */
    int64_t now_ns;
    bool types_loaded;
    uint64_t types_token;
    type_gen *gen;      /* pinned generation for types_token */
    /* generations this transaction moved off (it stored a Type record),
     * pinned until it ends: the types it looked up before stay valid */
    type_gen **retired;
    size_t nretired, capretired;
    bool attrs_loaded;
    uint64_t attrs_token;
    bool attrs_token_dirty;

    count_delta *counts;
    size_t ncounts, capcounts;
    seq_cache *seqs;
    size_t nseqs, capseqs;
    void *attrs_seen; /* attribute names handled in this transaction (types.c) */
    void *sigs_seen;  /* attribute-name signatures handled in this transaction */

    /* changes for after-commit notification (only for types with notify) */
    ads_change *changes;
    size_t nchanges, capchanges;
    ads_arena *change_arena;

    /* the backfill batch in effect (bulk loads), or NULL */
    ads_backfill *backfill;

    /* an index was declared or dropped in this transaction: a type a caller
     * looked up before may list stale indexes (index.c looks it up again) */
    bool indexes_changed;
    /* a bulk batch's index entries, queued until ads_index__flush (NULL:
     * entries are written as rows are) */
    struct ads_ixq *ixq;
};

/* ---- write transactions, for group commit (db.c, group.c) ---- */

/* Begin a write transaction whose parent is nested in root, the root
 * transaction of a group that another thread holds while this one works
 * (no map growth, no resize lock: the root has them); names_root: the
 * root's number for the name table (ads_txn.names_root of its leader). */
int ads_txn__begin_nested(ads_txn **out, ads_db *db, MDB_txn *root, uint64_t names_root,
                          ads_error *err);

/* The work of write transaction txn is over: with commit and txn not
 * broken, its state is flushed and its child committed into its parent (0);
 * otherwise, or if that fails, the child is dropped, the generator state
 * kept in the parent, and the error returned. After, txn->txn is the parent,
 * still open: *keep says it holds something to commit, *bad that it must be
 * aborted (writing the kept state failed; the message says so). err may be
 * NULL (an abort). */
int ads_txn__settle(ads_txn *txn, bool commit, bool *keep, bool *bad, ads_error *err);

/* The root holding txn's settled work (rc: what settling returned; handed:
 * the work handed out values) failed to commit with LMDB code mrc: the
 * error txn's owner gets. */
int ads_txn__root_failed(ads_txn *txn, int rc, bool handed, int mrc, ads_error *err);

/* txn's LMDB transactions are over (committed or not): release it and, if
 * its work is durably committed, run what follows a commit (Attribute names
 * learnt, after-commit hooks, in this thread); free it. */
void ads_txn__end(ads_txn *txn, bool committed);

/* The map size (under the resize lock, as growth changes it). */
size_t ads_db__map_size(ads_db *db);
/* How many times the map's size changed through db (to read before a write). */
unsigned ads_db__grown(ads_db *db);
/* A write found the map full after reading ads_db__grown as seen: double
 * the map, unless another writer has changed it since. */
int ads_db__grow(ads_db *db, unsigned seen, ads_error *err);

/* ---- shared helpers ---- */

/* Map an LMDB return code to an ads error (MDB_MAP_FULL -> ADS_EMAPFULL and
 * the transaction marked broken). */
int ads_db__lmdb(ads_txn *txn, ads_error *err, int rc, const char *what);

/* Put cursor c on the last key below *k (the greatest key < *k), filling *k
 * and *v: LMDB's 0, MDB_NOTFOUND when there is none, or its error. */
int ads_db__cursor_before(MDB_cursor *c, MDB_val *k, MDB_val *v);

/* The same with a cursor of its own on dbi, closed before returning. */
int ads_db__key_before(ads_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v);

/* A write call failed after it changed the store (txn->writes moved since
 * w0): mark the transaction broken, so that commit refuses and only abort
 * is left. Returns rc. */
int ads_db__failed_write(ads_txn *txn, uint64_t w0, int rc);

/* mdb_put / mdb_del through the transaction with error mapping. */
int ads_db__put(ads_txn *txn, MDB_dbi dbi, const void *k, size_t klen, const void *v,
                size_t vlen, unsigned flags, ads_error *err);
int ads_db__del(ads_txn *txn, MDB_dbi dbi, const void *k, size_t klen, ads_error *err);
/* ads_db__put through cursor c of the transaction (mdb_cursor_put: LMDB
 * looks for the key on the cursor's page first; with MDB_APPEND, a cursor
 * kept from put to put finds the end without a search). */
int ads_db__cursor_put(ads_txn *txn, MDB_cursor *c, const void *k, size_t klen, const void *v,
                       size_t vlen, unsigned flags, ads_error *err);

/* Read a meta value: 1 (with *v) or 0 if absent, or an error. */
int ads_db__meta_get(ads_txn *txn, const char *key, size_t klen, MDB_val *v, ads_error *err);
int ads_db__meta_put(ads_txn *txn, const char *key, size_t klen, const void *v, size_t vlen,
                     ads_error *err);

/* A write transaction is needed: ADS_EREADONLY naming what. */
int ads_db__need_write(ads_txn *txn, const char *what, ads_error *err);

/* The next __SystemTimestamp: max(now, last + 1) in microseconds. */
int ads_db__next_systs(ads_txn *txn, int64_t *out, ads_error *err);

/* Now, from the store's clock, in seconds. */
double ads_db__now(ads_txn *txn);

/* Drop the map's pages from this process's resident set after reading much
 * of the store (a scan, a dump, a bulk load): they stay in the page cache
 * and fault back in when read again, so the resident set of long reads stays
 * flat instead of growing to the size of the store. Safe because the map is
 * read-only (no MDB_WRITEMAP: writes go through pwrite). The caller must hold
 * db->resize (a transaction does), so the map cannot move meanwhile. */
void ads_db__drop_map_pages(ads_db *db);
/* The same for any environment opened read-only. */
void ads_db__drop_env_pages(MDB_env *env);
/* engine/repack.c: copy the store in dir into the empty directory tmp,
 * every table in key order with full pages (unsynced). */
int ads_db__repack(const char *dir, const char *tmp, ads_error *err);

/* File-backed bytes resident in this process (the store's map, libraries):
 * the "shared" pages of /proc/self/statm; SIZE_MAX when unknown, so that a
 * caller bounding it drops pages. */
size_t ads_db__resident_file_bytes(void);

/* Mark the store as holding secondary indexes (format version 2), in txn. */
int ads_db__format_indexed(ads_txn *txn, ads_error *err);
/* Mark the store as holding a composite index (format version 4), in txn. */
int ads_db__format_composite(ads_txn *txn, ads_error *err);
/* Raise the store's format to ADS_DB_FORMAT_ENVELOPE before a row is
 * written (the packed envelope; differences, version 5, come with it), once
 * per transaction. */
int ads_db__format_rows(ads_txn *txn, ads_error *err);
/* Raise the store's format to ADS_DB_FORMAT_CHUNKS before a history chunk
 * is written, in txn. */
int ads_db__format_chunks(ads_txn *txn, ads_error *err);
/* Raise the store's format to ADS_DB_FORMAT_NAMES (its first stored name). */
int ads_db__format_names(ads_txn *txn, ads_error *err);

/* ---- the attribute-name table (names.c) ---- */

int ads_names__new(ads_names **out);
void ads_names__free(ads_names *nm);
/* The resolver of txn->nm (ads_msgpack_names.name). */
int ads_names__resolve(const ads_msgpack_names *self, uint64_t id, ads_str *out, ads_error *err);
/* Append to out row (a row with names, as the encoders write it) as the
 * store keeps it: with attribute ids, giving new names ids in txn (a write
 * transaction); unchanged when the table is full. Errors: ADS_ECORRUPT,
 * ADS_ELIMIT, ADS_ENOMEM, ADS_ESTORAGE, ADS_EMAPFULL. */
int ads_names__encode(ads_txn *txn, ads_buf *out, const void *row, size_t len, ads_error *err);
/* ads_names__encode for a row that did not come through the store's write
 * path (a dump's), whose names are held to ADS_MAX_NAME_LEN: ADS_ELIMIT
 * names one over it. Note that a store without a name table keeps the row
 * as it is, unchecked. */
int ads_names__encode_limited(ads_txn *txn, ads_buf *out, const void *row, size_t len,
                              ads_error *err);
/* The id ads_names__encode gives name as the i-th attribute of a row (i
 * keys its memo of the last row's names): 0 with *id, 1 when the name has
 * none (the table full, or a store without one), or an error as there. */
int ads_names__id(ads_txn *txn, size_t i, const char *name, size_t len, uint64_t *id,
                  ads_error *err);
/* A write transaction's view of the name table brought up to date (what
 * ads_names__encode does first; shapes are kept only after it). */
int ads_names__sync(ads_txn *txn, ads_error *err);
/* Attributes of the largest row shape ads_names__shape knows. */
#define ADS_NAMES_SHAPE_MAX 64
/* A shape's id for a timeline attribute (which, 1-4, as
 * ads_row__timeline_attr says): ADS_NAMES_TIMELINE + which, above every
 * attribute id. */
#define ADS_NAMES_TIMELINE (UINT64_C(1) << 32)
/* Whether the row of view mv (with names) has the names, in order, of a
 * row kept by ads_names__keep_shape: 1 with *ids (the names' ids, valid for
 * this write), *tag (what the keeper said of them), vat[i] and vend[i]
 * (where value i lies in mv->body; room for ADS_NAMES_SHAPE_MAX); 0
 * otherwise. Only write transactions ask. */
int ads_names__shape(ads_txn *txn, const ads_msgpack_view *mv, size_t *vat, size_t *vend,
                     const uint64_t **ids, uint64_t *tag);
/* Remember the names of the row of view mv (with names) that txn has just
 * written with ids, when every name has an id (published, or this
 * transaction's own: such an entry lapses when ids are handed out again;
 * timeline attributes aside: those get ADS_NAMES_TIMELINE + which), with
 * tag (a fact of the caller's about those names, given back by
 * ads_names__shape). */
void ads_names__keep_shape(ads_txn *txn, const ads_msgpack_view *mv, uint64_t tag);
/*
 * Rows given to a write keyed by ids (a bulk load's, engine/bulk.c): the
 * ids of names the store holds, and for a timeline attribute given (which,
 * 1-4, as ads_row__timeline_attr says; rows never store one) the id
 * ADS_NAMES_GIVEN_TIMELINE + which, past every id the table can hand out.
 * Such a row is read through txn->given_nm, which names those ids too
 * (ads_names__resolve_given); a row holding a timeline attribute's id is
 * never stored as it is (the merge drops timeline attributes), one
 * without is stored as given.
 */
#define ADS_NAMES_GIVEN_TIMELINE ((uint64_t)ADS_NAMES_MAX)
int ads_names__resolve_given(const ads_msgpack_names *self, uint64_t id, ads_str *out,
                             ads_error *err);
/* The id the store has for name (its exact bytes), looked up by a write
 * transaction without adding one: 0 with *found (and *id when found), or
 * an error. */
int ads_names__known(ads_txn *txn, const char *name, size_t len, bool *found, uint32_t *id,
                     ads_error *err);
/* Rows keyed by ids read outside a transaction (a sorted load's stage):
 * ids the store has published (committed) and those of the timeline
 * attributes as txn->given_nm names them; r->nm is the table to read
 * through, valid while db is open. */
typedef struct ads_names_reader {
    ads_msgpack_names nm;
    ads_db *db;
} ads_names_reader;
void ads_names__reader(ads_names_reader *r, ads_db *db);

/* Giving the shapes an encoder remembers ids (engine/shape_ids.c). */
typedef struct ads_learnt {
    size_t n; /* 0: none */
    uint64_t ids[ADS_NAMES_SHAPE_MAX];
    uint64_t sig; /* the names' signature (ads_attrs__sig_*) */
} ads_learnt;
/* Into learnt[slot] (ADS_MSGPACK_ORDER_SHAPES of them), the ids txn gives
 * the names of each of memo's shapes that has none yet, when each may be
 * keyed by an id and has one, or (add) is given one: 0, or an error (then
 * nothing is learnt). */
int ads_shape_ids__learn(ads_learnt *learnt, const ads_msgpack_order *memo, ads_txn *txn,
                         bool add, ads_error *err);
/* Once the transaction that learnt them has committed: the ids to memo,
 * and to db->bulk_shapes for the loads after; whether there were any. */
bool ads_shape_ids__hand_over(ads_db *db, ads_msgpack_order *memo, const ads_learnt *learnt);
/* The ids earlier loads through db learnt, into a new memo. */
void ads_shape_ids__seed(ads_db *db, ads_msgpack_order *memo);

/* Whether this thread is running the work of a write on db (group.c): a
 * write asked for now would wait for itself. */
bool ads_db__in_write(const ads_db *db);

/* The row ads_stage_next gave last (engine/stage.c): 0 with the row,
 * whether it is keyed by ids (read through the names of the stage's store)
 * and its names' signature; ADS_EINVAL when there is none. */
int ads_stage__current(const ads_stage *s, const void **row, size_t *len, bool *by_ids,
                       uint64_t *sig, ads_db **db);

/* A write transaction's own changes were dropped (its parent lives on):
 * forget the ids it added. */
void ads_names__drop(ads_txn *txn);
/* The LMDB write transaction numbered root (ads_db__write_root) committed
 * or was abandoned: publish or forget the ids added in it. */
void ads_names__root_end(ads_db *db, uint64_t root, bool committed);
/* Ids the table holds as far as this handle has read it. */
uint32_t ads_names__count(ads_txn *txn);
/* The name table through which txn reads rows. */
static inline const ads_msgpack_names *ads_txn__names(ads_txn *txn)
{
    return &txn->nm;
}

/* Lower-case ASCII copy of s into the transaction arena (NUL-terminated). */
char *ads_db__fold(ads_txn *txn, const char *s, size_t len);

/* Types: the type by name / by id under the transaction's token. */
int ads_types__by_name(const ads_type **out, ads_txn *txn, const char *name, size_t len,
                       ads_error *err);
int ads_types__by_id(const ads_type **out, ads_txn *txn, uint32_t id, ads_error *err);
/* The built-in type records. */
const ads_type *ads_types__builtin(uint32_t id);
/* A Type record is about to be written for type name (new content in data):
 * validate it, assign an id if new, and move the transaction to a new types
 * token. old: the current latest Type row's data or NULL. */
int ads_types__declare(ads_txn *txn, const unsigned char *data, size_t len, bool deleted,
                       ads_error *err);
/* Before a Type record is purged: refuse if the type holds records. */
int ads_types__may_remove(ads_txn *txn, const unsigned char *key, size_t key_len, ads_error *err);
/* Release the transaction's pin on its generation. */
void ads_types__unpin(ads_txn *txn);
/* Free every cached generation (store close). */
void ads_types__free_all(ads_db *db);

/* Record and row counters of a type, changed by deltas. */
int ads_types__count(ads_txn *txn, uint32_t id, int64_t records, int64_t deleted,
                     int64_t history, ads_error *err);
/* Write the pending counters (commit). */
int ads_types__flush_counts(ads_txn *txn, ads_error *err);

/* Attribute bookkeeping: make sure every attribute name of the row data of
 * type t has an Attribute record. sig: the row's name signature if the caller
 * computed it (ads_attrs__sig_*), else 0. */
int ads_attrs__note(ads_txn *txn, const ads_type *t, const unsigned char *data, size_t len,
                    uint64_t sig, ads_error *err);

/* The signature of a row's names as written, in stored order (FNV-1a over
 * each name's length and bytes, seeded with the count): start, add each
 * name, finish. */
static inline uint64_t ads_attrs__sig_start(size_t n)
{
    return UINT64_C(0xcbf29ce484222325) ^ n;
}

static inline uint64_t ads_attrs__sig_add(uint64_t h, const char *p, size_t len)
{
    h = (h ^ len) * UINT64_C(0x100000001b3);
    for (size_t j = 0; j < len; j++)
        h = (h ^ (unsigned char)p[j]) * UINT64_C(0x100000001b3);
    return h;
}

static inline uint64_t ads_attrs__sig_end(uint64_t h)
{
    return h ? h : 1;
}
/* After commit: remember the names this transaction added. */
void ads_attrs__commit(ads_txn *txn);
/* Attribute records went away: forget what is known. */
int ads_attrs__invalidate(ads_txn *txn, ads_error *err);
void ads_attrs__free(ads_db *db);
/* Free the transaction's set of handled names. */
void ads_attrs__txn_free(ads_txn *txn);

/* Write the cached generator and counter state (commit, and abort). */
int ads_seq__flush(ads_txn *txn, ads_error *err);
/* True if the transaction handed out values from a generator. */
bool ads_seq__dirty(const ads_txn *txn);
/* A cached meta value of exactly len bytes (<= ADS_META_CACHE_MAX): *out
 * points at the cache entry (len 0 if absent); mark dirty after changing. */
int ads_seq__cached(seq_cache **out, ads_txn *txn, const char *key, size_t len, ads_error *err);
/* The next increment value of a meta counter (cached per transaction). */
int ads_seq__next_counter(ads_txn *txn, const char *key, uint64_t *out, ads_error *err);
/* The next generated key value for type t (its AutoGenerateKeyMethod). */
int ads_seq__type_value(ads_txn *txn, const ads_type *t, double ts, ads_value *out,
                        ads_error *err);

/* A key value v was given (not generated) for type t's generated key
 * attribute: an increment-keyed type's counter moves past it, so that its
 * generated keys do not walk through taken values. */
int ads_seq__note_key(ads_txn *txn, const ads_type *t, const ads_value *v, ads_error *err);

/* The latest row under a full record key: 1 found (fills env, skey), 0 not.
 * stored receives the stored key (ADS_KEY_INLINE_MAX bytes) and *slen its
 * length (for a new record: the key to store it under). */
/* Row's record as it stands now (row may be a history row or stale): 1 with
 * its latest row parsed into *env and its stored key in skey (*slen bytes),
 * 0 if the record is gone, or a negative code. */
int ads_store__latest(ads_txn *txn, const ads_row *row, unsigned char *skey, size_t *slen,
                      row_env *env, ads_error *err);
int ads_store__find(ads_txn *txn, const unsigned char *full, size_t flen, unsigned char *stored,
                    size_t *slen, MDB_val *val, ads_error *err);
/* The same through cur, a cursor on `latest` of txn's LMDB transaction (or
 * NULL: a lookup of its own). LMDB searches a positioned cursor's page
 * first, so a bulk load looking its sorted batch up through one cursor
 * mostly reads one page instead of descending from the root. A key not
 * found through the cursor is looked up again from the root. */
int ads_store__find_at(ads_txn *txn, MDB_cursor *cur, const unsigned char *full, size_t flen,
                       unsigned char *stored, size_t *slen, MDB_val *val, ads_error *err);
/* A bulk load's appends to `latest` through one cursor: LMDB appends
 * through a cursor left at the table's end without descending from the
 * root (as mdb_load -a does). The cursor serves only while nothing else has
 * written in the transaction since its own last append (txn->writes says);
 * else it is opened afresh, so it never relies on LMDB moving it through
 * other writes. Its owner closes it before the transaction ends. */
typedef struct ads_appender {
    MDB_cursor *cur; /* NULL: opened at the next append */
    uint64_t mark;   /* txn->writes after its last append */
} ads_appender;

/* Store a canonical MessagePack row of type t (store.c, see there); cur:
 * as for ads_store__find_at; ap (may be NULL): appends to `latest` go
 * through it (types without hooks). by_ids: the row is keyed by ids, read
 * through txn->given_nm (ADS_NAMES_GIVEN_TIMELINE; only a bulk load's own
 * encoder makes such rows); plain: such a row that the load's encoder
 * made from attributes with no undefined value and no name beginning with
 * '_' (so no timeline attribute), which the write need not look over; sig, when not 0, is the signature of its names
 * (ads_attrs__sig_*), in row order. */
int ads_store__encoded(ads_txn *txn, const ads_type *t, const unsigned char *data, size_t len,
                       const unsigned char *key, size_t key_len, bool merge, MDB_cursor *cur,
                       ads_appender *ap, bool by_ids, bool plain, uint64_t sig,
                       ads_write_info *info, ads_error *err);

/* Walks of a table (scan.c): what a walk relies on is checked as it goes,
 * each failure ADS_ECORRUPT naming type tname. ads_walk__order: key k
 * comes after the previous key prev (plen 0: none yet). check_start: the key
 * before the first key at or after prefix is below the prefix.
 * check_end: the key `end` that ended a walk (after `last`) is sound: in
 * order, its row reads, its type exists, the key after it is greater. */
int ads_walk__corrupt(const char *tname, const char *what, ads_error *err);
int ads_walk__order(const void *prev, size_t plen, const MDB_val *k, const char *tname,
                    ads_error *err);
int ads_walk__check_start(ads_txn *txn, MDB_dbi dbi, const unsigned char *prefix, size_t plen,
                          const char *tname, ads_error *err);
int ads_walk__check_end(ads_txn *txn, MDB_dbi dbi, const void *last, size_t llen,
                        const MDB_val *end, const char *tname, ads_error *err);

/* Hooks: note a change for after-commit notification. */
int ads_hooks__note(ads_txn *txn, const ads_type *t, ads_change_kind kind,
                    const unsigned char *data, size_t len, double ts, int64_t systs,
                    bool latest, ads_error *err);
/* Deliver and free the noted changes (after commit). */
void ads_hooks__deliver(ads_txn *txn);
/* Copy the hooks registered for t's name into t. */
void ads_hooks__attach(ads_db *db, ads_type *t);

/* Retention (retention.c): trim the history of the record stored under skey
 * at cut (its non-latest rows before the row in effect at cut go), at most
 * max rows (0: all), oldest first; *removed (may be NULL) counts them. */
int ads_retention__trim(ads_txn *txn, const ads_type *t, const unsigned char *skey, size_t slen,
                        double cut, uint64_t max, uint64_t *removed, ads_error *err);
/* What a write to the record stored under skey does under t's
 * HistoryRetention (the write path calls it for types with one): trim that
 * record (at most ADS_RETENTION_TRIM_PER_WRITE rows), then examine the next
 * ADS_RETENTION_SWEEP_PER_WRITE records of t from where the last write
 * stopped and purge those deleted before the cut. */
int ads_retention__on_write(ads_txn *txn, const ads_type *t, const unsigned char *skey,
                            size_t slen, ads_error *err);

/* ---- secondary indexes (index.c, index_scan.c) ---- */

/* The first byte of an index value that is not a key encoding. */
enum { IX_UNDEFINED = 0x01, IX_OTHER = 0x02 };

/* v big-endian at p: an index id as its entries' prefix. */
static inline void ads_index__be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* The indexes of type typeid from the registry, made in arena a. */
int ads_index__load(index_def **out, size_t *n, ads_txn *txn, uint32_t typeid, ads_arena *a,
                    ads_error *err);
/* Fill d (id set by the caller) from its registry name reg (reglen
 * bytes), copied into arena a. 0, or ADS_ENOMEM / ADS_ECORRUPT. */
int ads_index__def(index_def *d, const char *reg, size_t reglen, ads_arena *a, ads_error *err);
/* Append index ix's value of row data (len dlen, its names read through
 * nm) to b: the key encoding of each of its attributes in turn,
 * IX_UNDEFINED (0x01) for one absent or undefined; or IX_OTHER (0x02)
 * alone when one has no key encoding. */
void ads_index__value(ads_buf *b, const ads_msgpack_names *nm, const unsigned char *data,
                      size_t dlen, const index_def *ix, ads_arena *a);
/* The latest row of the record stored under skey changes from old (NULL: a
 * new record) to now (NULL: purged): move its entries in t's indexes.
 * scratch: an arena the call may allocate in (the write's), or NULL. */
int ads_index__row(ads_txn *txn, const ads_type *t, const unsigned char *skey, size_t slen,
                   const unsigned char *old, size_t olen, const unsigned char *now, size_t nlen,
                   ads_arena *scratch, ads_error *err);
/* An Attribute record's latest row changes from old to now (either NULL):
 * build or drop the index it declares with Indexed. ADS_EINVAL for an
 * Indexed that is not a boolean, a built-in type or a timeline attribute. */
int ads_index__declared(ads_txn *txn, const unsigned char *old, size_t olen,
                        const unsigned char *now, size_t nlen, ads_error *err);
/* A queue of index entry changes (index_queue.c): a bulk batch sets
 * txn->ixq, ads_index__row queues into it, and ads_index__flush writes the
 * queue in key order. Everything that reads the index table or changes it
 * directly flushes first, so the queue is never seen. */
typedef struct ads_ixq ads_ixq;
ads_ixq *ads_ixq__new(void);
void ads_ixq__free(ads_ixq *q);
/* Forget what q holds (a batch run again). */
void ads_ixq__reset(ads_ixq *q);
/* Queue a put of entry key (off: where its record key starts) or a delete. */
int ads_ixq__add(ads_ixq *q, bool put, const unsigned char *key, size_t len, uint16_t off,
                 ads_error *err);
/* Write txn's queued entries, sorted, through one cursor; the queue is
 * empty after, failed or not. 0 when there is no queue. */
int ads_index__flush(ads_txn *txn, ads_error *err);
/* Rebuild every registered index from the rows (restore). */
int ads_index__rebuild_all(ads_txn *txn, ads_error *err);
/* Walks of an index (an ads_scan over spans: scan.c wraps them). */
typedef struct ads_index_walk ads_index_walk;
int ads_index__walk_open(ads_index_walk **out, ads_txn *txn, const ads_type *t,
                         ads_index_span *const *spans, size_t n, const ads_expr *where,
                         unsigned flags, ads_error *err);
int ads_index__walk_next(ads_row **row, ads_index_walk *iw, ads_error *err);
/* ads_scan_set_stop for an index walk. */
void ads_index__walk_set_stop(ads_index_walk *iw, bool (*stop)(void *ctx), void *ctx);
void ads_index__walk_counts(ads_scan_counts *out, const ads_index_walk *iw);
/* ads_index_scan_filter's work: 1 taken, 0 not. */
int ads_index__walk_filter(ads_index_walk *iw, const ads_index_span *s);
void ads_index__walk_close(ads_index_walk *iw);
/* Verify every index against the rows: report each problem. */
int ads_index__verify(ads_txn *txn, void (*report)(void *ctx, const char *problem), void *ctx,
                      uint64_t *problems, ads_error *err);

/* The registry of indexes changed: move to a new types token (types.c). */
int ads_types__changed(ads_txn *txn, ads_error *err);

/* The four timeline attribute names. */
extern const char ads_attr__timestamp[];   /* "_Timestamp" */
extern const char ads_attr__systime[];     /* "__SystemTimestamp" */
extern const char ads_attr__latest[];      /* "__Latest" */
extern const char ads_attr__deleted[];     /* "_Deleted" */

/* Which timeline attribute name is (1..4 in the order above), or 0. */
int ads_row__timeline_attr(const char *name, size_t len);

/* Bulk loads (bulk.c): the record key of a row of type t (its view mv),
 * appended to key: 1, or 0 when the row's key is not all given as values
 * (it would be generated, or the write refuses it and says why), or
 * ADS_ENOMEM. stage.c sorts by it. hints: where the previous row held its
 * first ADS_BULK_KEY_HINTS key attributes, tried first and updated (see
 * ads_msgpack__lookup), or NULL; ids: their names' ids in the name table a
 * view keyed by ids is read through (UINT64_MAX for none; see
 * ads_msgpack__lookup_id), or NULL. */
#define ADS_BULK_KEY_HINTS 4
int ads_bulk__row_key(ads_buf *key, const ads_type *t, ads_msgpack_view *mv,
                      _Atomic uint32_t *hints, const uint64_t *ids, ads_error *err);

/* Snapshot sync (sync.c): note the record a bulk load's write left in effect
 * (wi), stored by a snapshot of time `when` (ads_sync_latest's). */
int ads_sync__note(ads_sync *s, const ads_write_info *wi, double when, ads_error *err);

#endif
