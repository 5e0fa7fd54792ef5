/*
 * classad/msgpack.h: ClassAd values and records as MessagePack bytes, and a
 * record view that evaluates straight over those bytes.
 *
 * One canonical encoding: the same record always gives the same bytes, so
 * rows can be compared, hashed and deduplicated as bytes. Plain MessagePack
 * types carry what they can (nil = undefined, bool, int in its smallest
 * form, float64, str, array = list, map = record); extension types carry
 * what only ClassAds have (error, AbsTime, RelTime, identifier, blob, and an
 * unevaluated expression kept as its adstore-style text). A row (a
 * top-level record) is a two-element array: a versioned header extension
 * holding an offset index of the attribute names, then the map of the
 * attributes sorted by case-folded name, so a lookup is a binary search
 * over the index that decodes nothing else. The format, byte by byte, is in
 * docs/formats.md ("MessagePack values and rows").
 *
 * Nothing read is trusted: every length is checked against the input,
 * nesting is limited to ADS_MAX_DEPTH containers, nothing is allocated
 * beyond what the input's own size justifies, and anything that is not the
 * canonical encoding is ADS_ECORRUPT with a message that says what was
 * wrong and at which byte offset ("msgpack: ... at byte 17").
 *
 * Memory: encoders append to an ads_buf the caller owns. Decoders build in
 * an ads_arena the caller owns; unless ADS_MSGPACK_COPY is given, decoded
 * strings, attribute names and blob bytes point into the input bytes, which
 * must then outlive the result (as LMDB's mdb_get data lives until the
 * transaction ends). Parsed expressions never point into the input.
 */
#ifndef ADS_CLASSAD_MSGPACK_H
#define ADS_CLASSAD_MSGPACK_H

#include <stddef.h>
#include <stdint.h>

#include "../classad/classad.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row format version the encoders write (attribute names as strings). */
#define ADS_MSGPACK_VERSION 1

/* The row format of a store's rows: attribute ids, resolved through the
 * store's name table (docs/formats.md, "Rows with attribute ids"). Only a
 * reader given that table reads it; every other reader refuses it with
 * ADS_EVERSION. */
#define ADS_MSGPACK_VERSION_IDS 2

/* MessagePack extension type numbers (docs/formats.md has the payloads). */
enum {
    ADS_MSGPACK_EXT_ERROR = 1,   /* empty payload */
    ADS_MSGPACK_EXT_ABSTIME = 2, /* float64 seconds, int32 zone offset (12 bytes) */
    ADS_MSGPACK_EXT_RELTIME = 3, /* float64 seconds (8 bytes) */
    ADS_MSGPACK_EXT_IDENT = 4,   /* 128-bit identifier, big-endian (16 bytes) */
    ADS_MSGPACK_EXT_BLOB = 5,    /* 0 | 1 metadata-map, then the bytes */
    ADS_MSGPACK_EXT_EXPR = 6,    /* an unevaluated expression's text */
    ADS_MSGPACK_EXT_ROW = 16     /* row header: version, index width, key offsets */
};

/* Largest blob (bytes): ADS_MSGPACK_BLOB_MAX in base/limits.h. */

/* Decoder flag: copy every string, attribute name and blob into the arena,
 * so the result does not point into the input bytes. */
#define ADS_MSGPACK_COPY 1u

/* ------------------------------------------------------------------------ */
/* Encoding                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Append the row encoding of record r to out: the versioned header with the
 * name index, then the attributes sorted by case-folded name. An attribute
 * whose expression is a literal is stored as its value; a list or record
 * expression as an array or map of its members (each by the same rule); any
 * other expression as the text ads_expr_unparse gives it. NaN is written as
 * the one quiet NaN 0x7ff8000000000000.
 *
 * On error, out is left as it was before the call (its length restored).
 * Errors: ADS_ELIMIT (nesting deeper than ADS_MAX_DEPTH, a string, blob,
 * list, record or row too large for the format); ADS_EINVAL (r holds two
 * names equal ignoring case, or an empty name: records built by this
 * library never do); ADS_ENOMEM.
 */
int ads_msgpack_encode_record(ads_buf *out, const ads_record *r, ads_error *err);

/*
 * A memo of the attribute order of the last rows encoded through it (the
 * last of each attribute count modulo 8), for encoding many records with
 * the same names (a bulk load): a record whose names are exactly those of
 * the last one of its count (the same bytes in the same order) reuses their
 * sorted order and the check that no two are equal ignoring case. Belongs
 * to its creator; one thread at a time.
 * ads_msgpack_order_new: ADS_EINVAL, ADS_ENOMEM.
 */
typedef struct ads_msgpack_order ads_msgpack_order;
int ads_msgpack_order_new(ads_msgpack_order **out, ads_error *err);
void ads_msgpack_order_free(ads_msgpack_order *o);

/* ads_msgpack_encode_record through memo (NULL: none); the bytes are the
 * same either way. Errors as ads_msgpack_encode_record. */
int ads_msgpack_encode_row(ads_buf *out, const ads_record *r, ads_msgpack_order *memo,
                           ads_error *err);

/* The row of the record whose attribute names[i] has value values[i] (n of
 * them, in any order), as ads_msgpack_encode_row writes that record, without
 * the record: for a writer that has its attributes in arrays (a bulk load's
 * ads_bulk_add_values). Errors as ads_msgpack_encode_record (two names equal
 * ignoring case, a name without bytes but with a length: ADS_EINVAL; out as
 * it was). */
int ads_msgpack_encode_values(ads_buf *out, const ads_str *names, const ads_value *values,
                              size_t n, ads_msgpack_order *memo, ads_error *err);

/*
 * Append the encoding of one value to out, as it appears inside a row (no
 * header, no version: a value is always read in the context of a row or of
 * a format that is itself versioned). Records inside values are plain maps
 * sorted as in rows, without the index. Errors as ads_msgpack_encode_record.
 */
int ads_msgpack_encode_value(ads_buf *out, const ads_value *v, ads_error *err);

/* Append the encoding of an expression as a row stores an attribute (see
 * ads_msgpack_encode_record). Errors as ads_msgpack_encode_record. */
int ads_msgpack_encode_expr(ads_buf *out, const ads_expr *e, ads_error *err);

/* ------------------------------------------------------------------------ */
/* Decoding                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Decode a whole row (len bytes at bytes) into a record in arena a,
 * validating all of it as ads_msgpack_check does. Attributes come back in
 * stored order (sorted by case-folded name). Members that are lists or
 * records of plain values come back as literals; those holding expressions
 * as list or record expressions; expression texts are parsed. flags: 0 or
 * ADS_MSGPACK_COPY.
 *
 * *out belongs to the arena. Errors: ADS_ECORRUPT (with the byte offset in
 * the message); ADS_EVERSION (a row format other than ADS_MSGPACK_VERSION);
 * ADS_EINVAL (NULL arguments); ADS_ENOMEM.
 */
int ads_msgpack_decode_record(const ads_record **out, ads_arena *a, const void *bytes,
                              size_t len, unsigned flags, ads_error *err);

/*
 * Decode one value (the whole of len bytes, as ads_msgpack_encode_value
 * writes it) into arena a. Records inside may hold expressions (as the
 * value that was encoded did); an expression standing where only a value
 * can stand (at the top, or directly in a list) cannot be a value: use
 * ads_msgpack_decode_expr for those bytes. Errors: ADS_ECORRUPT; ADS_EINVAL
 * (NULL arguments, or the bytes hold such an expression); ADS_ENOMEM.
 */
int ads_msgpack_decode_value(ads_value *out, ads_arena *a, const void *bytes, size_t len,
                             unsigned flags, ads_error *err);

/* Decode one encoded attribute (value or expression, as
 * ads_msgpack_encode_expr writes it) to an expression in arena a: a literal
 * for plain values. Errors: ADS_ECORRUPT; ADS_EINVAL; ADS_ENOMEM. */
int ads_msgpack_decode_expr(const ads_expr **out, ads_arena *a, const void *bytes, size_t len,
                            unsigned flags, ads_error *err);

/*
 * Check that len bytes are a canonical row of this version, completely:
 * every item well formed and in its canonical form, keys sorted and
 * distinct ignoring case, the index pointing at each key, the index width
 * the smallest that fits, nothing after the row, every expression text
 * parsing. The expression texts are parsed in a private arena, freed before
 * return. Errors: ADS_ECORRUPT (what and at which byte); ADS_EVERSION;
 * ADS_EINVAL (NULL bytes with len > 0); ADS_ENOMEM.
 */
int ads_msgpack_check(const void *bytes, size_t len, ads_error *err);

/* ------------------------------------------------------------------------ */
/* The record view over row bytes                                           */
/* ------------------------------------------------------------------------ */

/*
 * A record view (ads_view, classad/classad.h) over the bytes of one row:
 * evaluation reads attributes straight from the bytes. A lookup binary
 * searches the name index (a few key comparisons, no decoding) and then
 * decodes only the one attribute found:
 *   - plain scalars (undefined, error, booleans, integers, reals, strings,
 *     times, identifiers) come back as values without allocating; strings
 *     point into the bytes (zero copy);
 *   - lists, records and blobs are decoded, and expression texts parsed,
 *     into the view's arena, once: the view remembers what it decoded, so
 *     later lookups of the attribute return the same value or the same
 *     expression. That keeps repeated lookups cheap, and it is what lets
 *     evaluation recognise a circular reference (`[a = b; b = a]`) at its
 *     first repetition: without it, a hostile row whose attribute refers to
 *     itself twice would take time exponential in the depth limit.
 *
 * The fields are private: use the functions below. The view does not own
 * the bytes: they must stay unchanged while the view or anything looked up
 * through it is in use. Lookups change the view's memory of decoded
 * attributes, so a view is used by one thread at a time (give each thread
 * its own view of the same bytes: starting one is O(1)).
 */
/*
 * A name table: how a row with attribute ids (ADS_MSGPACK_VERSION_IDS)
 * names its attributes. name() sets *out to the name of attribute id (the
 * bytes stay valid while the table does) and returns 0, or ADS_ECORRUPT
 * for an id the table does not hold. A store keeps one (engine/names.c).
 */
typedef struct ads_msgpack_names {
    int (*name)(const struct ads_msgpack_names *self, uint64_t id, ads_str *out,
                ads_error *err);
} ads_msgpack_names;

typedef struct ads_msgpack_view {
    const unsigned char *row;   /* the row's first byte (offsets in messages count from it) */
    const unsigned char *body;  /* the attribute map, from its header byte */
    size_t body_len;            /* to the end of the row */
    const unsigned char *index; /* n key offsets, width bytes each, big-endian */
    size_t n;
    unsigned width;
    ads_arena *arena;           /* where decoded attributes live */
    const ads_expr **slots;     /* per attribute: its decoded form, made on demand */
    const ads_msgpack_names *names; /* a row with attribute ids: their names; else NULL */
} ads_msgpack_view;

/*
 * Start a view over the row of len bytes at bytes. Only the header is read
 * (the leading array, the header extension, its version and index width,
 * and the map header, which must agree with the index): O(1). The rest is
 * checked as lookups read it; ads_msgpack_check checks everything.
 *
 * arena: where the view keeps what it decodes. The view, and every value
 * and expression looked up through it, is valid until that arena is reset
 * or freed (as anything made in it is) and while the bytes are: in a scan,
 * start a view per row, evaluate, then reset the arena.
 *
 * Errors: ADS_ECORRUPT (a header that is not a row's, with the byte offset);
 * ADS_EVERSION; ADS_EINVAL (mv or arena NULL, or bytes NULL with len > 0).
 */
int ads_msgpack_view_init(ads_msgpack_view *mv, const void *bytes, size_t len, ads_arena *arena,
                          ads_error *err);

/* The ads_view of mv for evaluation (parent: the enclosing view, or NULL).
 * The ads_view points at mv, which must outlive it. Lookups through it fail
 * with ADS_ECORRUPT on bad bytes, which evaluation turns into an error
 * value; the arena evaluation passes to lookups is not used (see above). */
ads_view ads_msgpack_view_get(ads_msgpack_view *mv, const ads_view *parent);

/*
 * Look attribute name (len bytes, compared ignoring ASCII case) up in the
 * row, as evaluation does: returns 1 with either *value set (a plain value;
 * *expr NULL) or *expr set (an expression to evaluate in the row's scope),
 * 0 when the row has no such attribute, or a negative code.
 * Errors: ADS_ECORRUPT; ADS_EINVAL (NULL arguments); ADS_ENOMEM.
 */
int ads_msgpack_view_lookup(ads_value *value, const ads_expr **expr, ads_msgpack_view *mv,
                            const char *name, size_t len, ads_error *err);

/* The number of attributes of the row. */
size_t ads_msgpack_view_size(const ads_msgpack_view *mv);

/* The name of the i-th attribute in stored order (0 <= i < size), pointing
 * into the bytes. Errors: ADS_ECORRUPT; ADS_EINVAL (i out of range). */
int ads_msgpack_view_name(ads_str *out, const ads_msgpack_view *mv, size_t i, ads_error *err);

/* Whether the attributes of row view a, less those at the positions
 * skip[0..nskip) (ascending), are byte for byte the attributes of row view
 * b: the same names in the same order with the same encodings. Canonical
 * rows (ads_msgpack_encode_row) that hold the same attributes are equal
 * this way. false as well when an index does not describe its row. */
bool ads_msgpack_view_same_except(const ads_msgpack_view *a, const size_t *skip, size_t nskip,
                                  const ads_msgpack_view *b);

/*
 * The i-th attribute in stored order (0 <= i < size), as a lookup of its
 * name would give it, without searching: *name points into the bytes, and
 * either *value is set (a plain value; *expr NULL) or *expr (an expression,
 * or a list or record holding one), valid as a lookup's are. Reading every
 * attribute this way copies no string: only lists, records, blobs and
 * expressions are decoded into the view's arena. Errors: ADS_ECORRUPT;
 * ADS_EINVAL (NULL arguments, i out of range); ADS_ENOMEM.
 */
int ads_msgpack_view_attr(ads_str *name, ads_value *value, const ads_expr **expr,
                          ads_msgpack_view *mv, size_t i, ads_error *err);

#ifdef __cplusplus
}
#endif
#endif
