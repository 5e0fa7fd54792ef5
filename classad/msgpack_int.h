/*
 * classad/msgpack_int.h: the MessagePack reader and writer as the engine
 * uses them for stored rows, whose attributes are named by ids resolved
 * through the store's name table (docs/formats.md, "Rows with attribute
 * ids"). Not part of the public API.
 */
#ifndef ADS_CLASSAD_MSGPACK_INT_H
#define ADS_CLASSAD_MSGPACK_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "classad/msgpack.h"

/* ---- rows with attribute ids (a store's rows; docs/formats.md) ---- */

/* The readers of ads_msgpack_view_init, ads_msgpack_decode_record and
 * ads_msgpack_check that also read rows with attribute ids, through names
 * (NULL: rows with names only, as the public functions). The view does not
 * prefetch the row's cache lines as ads_msgpack_view_init does: a store's
 * rows come here right after their checksum read every byte. */
int ads_msgpack__view_open(ads_msgpack_view *mv, const void *bytes, size_t len,
                           const ads_msgpack_names *names, ads_arena *arena,
                           ads_error *err);
int ads_msgpack__decode_row(const ads_record **out, ads_arena *a, const void *bytes, size_t len,
                            const ads_msgpack_names *names, unsigned flags,
                            ads_error *err);
int ads_msgpack__check_row(const void *bytes, size_t len, const ads_msgpack_names *names,
                           ads_error *err);

/* Attribute i of the view: its name, and where its entry (key), its value
 * and the entry's end are, counted from mv->body. Errors: ADS_ECORRUPT. */
int ads_msgpack__view_entry(const ads_msgpack_view *mv, size_t i, ads_str *name,
                            size_t *key_at, size_t *value_at, size_t *end, ads_error *err);

/* Every attribute of the view as ads_msgpack__view_entry gives it: names[i],
 * and where its value starts and ends (vat[i], vend[i], from mv->body).
 * Errors: ADS_ECORRUPT. */
int ads_msgpack__entries(const ads_msgpack_view *mv, ads_str *names, size_t *vat, size_t *vend,
                         ads_error *err);

/* ads_msgpack_view_lookup with an index hint as for ads_record__find_hinted:
 * the name is looked for at *hint first, and *hint is set to where it was
 * found (hint NULL: none). */
int ads_msgpack__lookup(ads_value *value, const ads_expr **expr, ads_msgpack_view *mv,
                        const char *name, size_t len, _Atomic uint32_t *hint, ads_error *err);

/* ads_msgpack__lookup for a caller that knows id, the id name has in the
 * name table mv is read through (a view keyed by ids): the attribute at
 * *hint is taken when its key is id, one integer compared and no name
 * resolved; anything else goes the way of ads_msgpack__lookup. */
int ads_msgpack__lookup_id(ads_value *value, const ads_expr **expr, ads_msgpack_view *mv,
                           const char *name, size_t len, uint64_t id, _Atomic uint32_t *hint,
                           ads_error *err);

/* The bytes of attribute name's entry in mv (found ignoring case, as
 * lookups find it: its key, then its value) when the value is exactly one
 * of the plain scalars a lookup decodes in place (an integer, a real, a
 * string of up to 255 bytes, a boolean, undefined, an AbsTime): 1 with the
 * entry at *p, n bytes; 0 when mv has no such attribute; -1 for anything
 * else (an expression, a list, another form, damaged bytes). *hint: where
 * to look first (any number), set to the entry's index. Rows read through
 * one name table whose entries for a name have the same bytes hold the same
 * literal under it. */
int ads_msgpack__scalar_entry(const unsigned char **p, size_t *n, const ads_msgpack_view *mv,
                              const char *name, size_t len, uint32_t *hint);

/* The bytes of entry i of mv (its key and value), found through the index
 * alone: true with *p and *n, false when i is out of range or the index
 * does not describe the body. Nothing is checked of the bytes. */
bool ads_msgpack__entry_bytes(const unsigned char **p, size_t *n, const ads_msgpack_view *mv,
                              size_t i);

/* An attribute id's canonical form as a row's key (a positive fixint, or
 * uint8, uint16 or uint32): its length in bytes, and written at p (room for
 * 5). One owner for the form: the writer and the comparison of a given row
 * with a stored one. */
static inline size_t ads_msgpack__id_size(uint64_t id)
{
    return id <= 0x7f ? 1 : id <= 0xff ? 2 : id <= 0xffff ? 3 : 5;
}

static inline size_t ads_msgpack__put_id(unsigned char *p, uint64_t id)
{
    if (id <= 0x7f) {
        p[0] = (unsigned char)id;
        return 1;
    }
    size_t width = id <= 0xff ? 1 : id <= 0xffff ? 2 : 4;
    p[0] = width == 1 ? 0xcc : width == 2 ? 0xcd : 0xce;
    for (size_t k = 0; k < width; k++)
        p[1 + k] = (unsigned char)(id >> (8 * (width - 1 - k)));
    return 1 + width;
}

/* An attribute id (a row's key in a row with ids) at p, left bytes there:
 * its header length (1, 2, 3 or 5) with *id, or 0 for anything that is not
 * an unsigned integer of 32 bits at most; *canonical tells whether it is in
 * its shortest form (put_id's). */
static inline unsigned ads_msgpack__id_head(const unsigned char *p, size_t left, uint64_t *id,
                                            bool *canonical)
{
    if (!left)
        return 0;
    unsigned t = p[0];
    if (t <= 0x7f) {
        *id = t;
        *canonical = true;
        return 1;
    }
    unsigned w = t == 0xcc ? 1 : t == 0xcd ? 2 : t == 0xce ? 4 : 0;
    if (!w || left - 1 < w)
        return 0;
    uint64_t v = 0;
    for (unsigned k = 0; k < w; k++)
        v = v << 8 | p[1 + k];
    *id = v;
    *canonical = v >= (w == 1 ? 0x80u : w == 2 ? 0x100u : 0x10000u);
    return 1 + w;
}

/* Entry i of a row header's index of offsets, width bytes each (1, 2 or
 * 4), big-endian: a load per width. */
static inline size_t ads_msgpack__offset_at(const unsigned char *index, unsigned width, size_t i)
{
    const unsigned char *p = index + i * width;
    switch (width) {
    case 1:
        return p[0];
    case 2:
        return (size_t)p[0] << 8 | p[1];
    default:
        return (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    }
}

/* The offset of attribute i's key in the view's index (from mv->body). */
static inline size_t ads_msgpack__index_off(const ads_msgpack_view *mv, size_t i)
{
    return ads_msgpack__offset_at(mv->index, mv->width, i);
}

/* Whether row bytes (already known to be a row) carry attribute ids. */
bool ads_msgpack__row_has_ids(const void *bytes, size_t len);

/* The id of a row's i-th name for ads_msgpack__to_ids: 0 with *id (at most
 * UINT32_MAX), 1 when the name has no id (the row then stays as it is), or
 * an error. */
typedef int (*ads_msgpack_id_fn)(void *ctx, size_t i, const char *name, size_t len, uint64_t *id,
                                 ads_error *err);

/* Append to out the row with attribute ids equal to the row with names at
 * row (len bytes; read as ads_msgpack_view_init reads, the values copied as
 * they are): 0, or 1 having appended the row unchanged because a name has
 * no id, or an error (ADS_ECORRUPT, ADS_ELIMIT, ADS_ENOMEM, id_of's). */
int ads_msgpack__to_ids(ads_buf *out, const void *row, size_t len, ads_msgpack_id_fn id_of,
                        void *ctx, ads_error *err);

/* Append to out the row of view mv (with names) with attribute ids: ids[i]
 * for attribute i, whose value lies at [vat[i], vend[i]) in mv->body (as
 * ads_msgpack__entries gives them), copied as it is. The bytes are those
 * ads_msgpack__to_ids writes for the same ids. Errors: ADS_ELIMIT,
 * ADS_ENOMEM. */
int ads_msgpack__ids_row(ads_buf *out, const ads_msgpack_view *mv, const uint64_t *ids,
                         const size_t *vat, const size_t *vend, ads_error *err);

/*
 * Rows keyed by attribute ids from the start, for a bulk load whose records
 * come in a few shapes (engine/bulk.c). The memo of ads_msgpack_encode_row
 * keeps the names of the last record of each attribute count modulo
 * ADS_MSGPACK_ORDER_SHAPES (a slot); its owner may give a slot's names
 * their ids (memo_set_ids, in row order, with a tag of its own). Then
 * encode_row_ids and encode_values_ids write a record of exactly those
 * names as ads_msgpack_encode_row would, but keyed by the ids (version
 * ADS_MSGPACK_VERSION_IDS), and say so (*with_ids, *tag); any other record
 * is written with names (*with_ids false). A slot that takes other names
 * loses its ids.
 */
#define ADS_MSGPACK_ORDER_SHAPES 8
int ads_msgpack__encode_row_ids(ads_buf *out, const ads_record *r, ads_msgpack_order *memo,
                                bool *with_ids, uint64_t *tag, bool *plain, ads_error *err);
int ads_msgpack__encode_values_ids(ads_buf *out, const ads_str *names, const ads_value *values,
                                   size_t n, ads_msgpack_order *memo, bool *with_ids,
                                   uint64_t *tag, bool *plain, ads_error *err);
/* The names of slot's record in row order into names (cap of them): their
 * count, 0 for an empty slot or more than cap; *with_ids: they have ids. */
size_t ads_msgpack__memo_shape(const ads_msgpack_order *memo, unsigned slot, ads_str *names,
                               size_t cap, bool *with_ids);
/* Give slot's n names (row order) the ids ids[0..n) and tag; nothing when
 * the slot holds another count of names, or without memory. */
void ads_msgpack__memo_set_ids(ads_msgpack_order *memo, unsigned slot, size_t n,
                               const uint64_t *ids, uint64_t tag);

/* How many shapes the memo has taken in so far: it changes when a record's
 * names become a slot's. */
uint64_t ads_msgpack__memo_kept(const ads_msgpack_order *memo);

/* Every slot of src whose names have ids copied into dst's slot (best
 * effort: a slot without memory is left empty). */
void ads_msgpack__memo_copy_ids(ads_msgpack_order *dst, const ads_msgpack_order *src);

/* What ads_msgpack_view_same_except(a, skip, nskip, b) says, for a row a
 * (with names) whose attribute i has the id ids[i] and its value at
 * [vat[i], vend[i]) of a->body (as ads_msgpack__entries gives them), and a
 * row b with attribute ids: b holds exactly a's attributes but those at
 * skip (nskip indexes, increasing), keyed by their ids, with the same value
 * bytes. b's entries are read straight through, without its index or its
 * names. False also when b names its attributes by strings. */
bool ads_msgpack__same_as_ids(const ads_msgpack_view *a, const uint64_t *ids, const size_t *vat,
                              const size_t *vend, const size_t *skip, size_t nskip,
                              const ads_msgpack_view *b);

/* Append to out the difference of row (len bytes) from base (blen bytes),
 * two rows of one version (docs/formats.md, "Row differences"): 0; 1 when
 * the two cannot be written so (versions differ, or bytes that are not a
 * row as the encoders lay one out), out as it was; -1 out of memory. */
int ads_msgpack__delta(ads_buf *out, const void *row, size_t len, const void *base,
                       size_t blen);

/* Append to out the row that difference ops (olen bytes) makes of base.
 * Errors: ADS_ECORRUPT (steps that do not fit the base, a base that is not
 * a row), ADS_ELIMIT, ADS_ENOMEM; out as it was. The row made is not
 * checked further: the caller reads it as any stored row. */
int ads_msgpack__undelta(ads_buf *out, const void *ops, size_t olen, const void *base,
                         size_t blen, ads_error *err);

/* Append to out the row with names equal to row (with ids resolved through
 * names, or with names, copied as it is). Errors: ADS_ECORRUPT, ADS_EVERSION,
 * ADS_ELIMIT, ADS_ENOMEM. */
int ads_msgpack__to_names(ads_buf *out, const void *row, size_t len,
                          const ads_msgpack_names *names, ads_error *err);

#endif
