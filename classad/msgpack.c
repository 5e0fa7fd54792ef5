/*
 * classad/msgpack.c: the reader of ClassAd values and rows as MessagePack,
 * and the record view that evaluates over row bytes (classad/msgpack.h; the
 * format is docs/formats.md, "MessagePack values and rows"). The writer is
 * classad/msgpack_write.c.
 *
 * Reading is a small hand-written reader of exactly the canonical subset,
 * for three reasons msgpack-c's unpacker cannot serve: the view must find
 * one attribute without decoding the row (msgpack-c only unpacks whole
 * objects, into its own zone, copying); a canonical format must refuse
 * every other spelling of a value (msgpack-c accepts them all), so that
 * accepted bytes re-encode to themselves; and a hostile input must not make
 * the reader allocate more than the input's size justifies (msgpack-c
 * sizes its zone from the counts the input claims). Every read is checked
 * against the end of the input first; nesting is counted.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "classad/classad_int.h"
#include "classad/msgpack.h"

#define CANONICAL_NAN 0x7ff8000000000000ull


static inline uint16_t be16(const unsigned char *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t be64(const unsigned char *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static uint64_t get_be(const unsigned char *p, unsigned width)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++)
        v = v << 8 | p[i];
    return v;
}

/* Two's complement bits as a signed number, without the
 * implementation-defined conversion of out-of-range values. */
static int64_t s64_of(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)~u - 1;
}

static int32_t s32_of(uint32_t u)
{
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(-(int64_t)(uint32_t)~u - 1);
}

static double double_of(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* The smallest index width (bytes per offset) that holds offset max. */
static unsigned width_for(uint64_t max)
{
    return max <= 0xff ? 1 : max <= 0xffff ? 2 : 4;
}

/* ======================================================================== */
/* Reading                                                                  */
/* ======================================================================== */

typedef struct rd {
    const unsigned char *base; /* offsets in messages count from here */
    const unsigned char *p, *end;
    ads_arena *arena;  /* where to build; NULL: only check */
    ads_arena *tmp;    /* check mode: a scratch arena for expression texts */
    unsigned flags;
    bool scalar_only;  /* the view's fast path: stop at anything needing an arena */
    const ads_msgpack_names *names; /* rows with attribute ids: their names */
    ads_error *err;
} rd;

/* What read_item stops with when scalar_only meets a container, a blob or
 * an expression (positive: not an error). */
#define NEEDS_ARENA 1

/* An item read: a plain value, or (e != NULL) an expression. */
typedef struct item {
    ads_value v;
    const ads_expr *e;
} item;

static int corrupt_(rd *r, const unsigned char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int corrupt_(rd *r, const unsigned char *at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ads_error_set(r->err, ADS_ECORRUPT, "msgpack: %s at byte %zu", what,
                         (size_t)(at - r->base));
}
/* varargs functions are not inlined: let callers see the code is nonzero */
#define corrupt(r, at, ...) ads_error__code(corrupt_((r), (at), __VA_ARGS__), ADS_ECORRUPT)

static int oom(rd *r)
{
    return ads_error_set(r->err, ADS_ENOMEM, "msgpack: out of memory");
}

/* n more bytes must be there (at: where the item they belong to starts). */
static inline int need(rd *r, const unsigned char *at, size_t n)
{
    if ((size_t)(r->end - r->p) < n)
        return corrupt(r, at, "item needs %zu more bytes, only %zu left", n,
                       (size_t)(r->end - r->p));
    return 0;
}

static void *alloc(rd *r, size_t n)
{
    return ads_arena_alloc(r->arena, n ? n : 1);
}

static int read_item(rd *r, int depth, item *out);

/* Bytes of length len at r->p: zero copy, or copied with ADS_MSGPACK_COPY. */
static int take_bytes(rd *r, size_t len, const char **out)
{
    const char *p = (const char *)r->p;
    r->p += len;
    if (r->arena && (r->flags & ADS_MSGPACK_COPY)) {
        char *c = ads_arena_strndup(r->arena, p, len);
        if (!c)
            return oom(r);
        p = c;
    }
    *out = p;
    return 0;
}

/* The header of a string whose tag byte t was just read: its length. */
static int read_str_head(rd *r, const unsigned char *at, unsigned t, size_t *len)
{
    int rc;
    if ((t & 0xe0) == 0xa0) {
        *len = t & 31;
    } else if (t == 0xd9) {
        if ((rc = need(r, at, 1)))
            return rc;
        *len = *r->p++;
        if (*len < 32)
            return corrupt(r, at, "str8 of %zu bytes (a fixstr is canonical)", *len);
    } else if (t == 0xda) {
        if ((rc = need(r, at, 2)))
            return rc;
        *len = be16(r->p);
        r->p += 2;
        if (*len < 256)
            return corrupt(r, at, "str16 of %zu bytes (str8 is canonical)", *len);
    } else if (t == 0xdb) {
        if ((rc = need(r, at, 4)))
            return rc;
        *len = be32(r->p);
        r->p += 4;
        if (*len < 65536)
            return corrupt(r, at, "str32 of %zu bytes (str16 is canonical)", *len);
    } else {
        return corrupt(r, at, "expected a string, found byte 0x%02x", t);
    }
    if ((size_t)(r->end - r->p) < *len)
        return corrupt(r, at, "string of %zu bytes runs past the end (%zu bytes left)", *len,
                       (size_t)(r->end - r->p));
    return 0;
}


/* The name of attribute id through the row's name table. */
static int id_name(rd *r, const unsigned char *at, uint64_t id, ads_str *out)
{
    ads_error e;
    if (r->names->name(r->names, id, out, &e))
        return corrupt(r, at, "attribute id %llu is not in the store's name table",
                       (unsigned long long)id);
    if (out->len == 0)
        return corrupt(r, at, "attribute id %llu names an empty name", (unsigned long long)id);
    return 0;
}

/* The count of an array or map whose tag byte t was just read. small: the
 * bits of the fix form (0x90 or 0x80); t16 / t32: the longer forms. */
static int read_count(rd *r, const unsigned char *at, unsigned t, unsigned fix, unsigned t16,
                      const char *what, size_t *n)
{
    int rc;
    if ((t & 0xf0) == fix) {
        *n = t & 15;
    } else if (t == t16) {
        if ((rc = need(r, at, 2)))
            return rc;
        *n = be16(r->p);
        r->p += 2;
        if (*n < 16)
            return corrupt(r, at, "%s16 of %zu entries (the fix form is canonical)", what, *n);
    } else if (t == t16 + 1) {
        if ((rc = need(r, at, 4)))
            return rc;
        *n = be32(r->p);
        r->p += 4;
        if (*n < 65536)
            return corrupt(r, at, "%s32 of %zu entries (%s16 is canonical)", what, *n, what);
    } else {
        return corrupt(r, at, "expected a %s, found byte 0x%02x", what, t);
    }
    return 0;
}

/* The header of an extension whose tag byte t was just read. */
static int read_ext_head(rd *r, const unsigned char *at, unsigned t, size_t *len, int *type)
{
    int rc;
    size_t hl;
    switch (t) {
    case 0xd4: *len = 1; hl = 0; break;
    case 0xd5: *len = 2; hl = 0; break;
    case 0xd6: *len = 4; hl = 0; break;
    case 0xd7: *len = 8; hl = 0; break;
    case 0xd8: *len = 16; hl = 0; break;
    case 0xc7: hl = 1; break;
    case 0xc8: hl = 2; break;
    case 0xc9: hl = 4; break;
    default:
        return corrupt(r, at, "expected an extension, found byte 0x%02x", t);
    }
    if ((rc = need(r, at, hl + 1)))
        return rc;
    if (hl) {
        *len = (size_t)get_be(r->p, (unsigned)hl);
        r->p += hl;
        bool fix = *len == 1 || *len == 2 || *len == 4 || *len == 8 || *len == 16;
        if ((hl == 1 && fix) || (hl == 2 && *len < 256) || (hl == 4 && *len < 65536))
            return corrupt(r, at, "ext%zu with a %zu-byte payload (a shorter form is canonical)",
                           hl * 8, *len);
    }
    *type = (int8_t)*r->p++;
    if ((size_t)(r->end - r->p) < *len)
        return corrupt(r, at, "extension payload of %zu bytes runs past the end (%zu bytes left)",
                       *len, (size_t)(r->end - r->p));
    return 0;
}

static ads_expr *literal_node(ads_expr *node, const ads_value *v)
{
    memset(node, 0, sizeof *node);
    node->kind = N_LITERAL;
    node->u.lit = *v;
    return node;
}

static int read_array(rd *r, const unsigned char *at, size_t n, int depth, item *out)
{
    int rc;
    if (depth + 1 > ADS_MAX_DEPTH)
        return corrupt(r, at, "containers nested deeper than %d levels", ADS_MAX_DEPTH);
    if (n > (size_t)(r->end - r->p))
        return corrupt(r, at, "array of %zu items cannot fit in the %zu bytes left", n,
                       (size_t)(r->end - r->p));
    if (!r->arena) {
        item it;
        for (size_t i = 0; i < n; i++)
            if ((rc = read_item(r, depth + 1, &it)))
                return rc;
        out->v = ads_list(NULL, 0);
        return 0;
    }
    ads_value *vals = alloc(r, n * sizeof *vals);
    if (!vals)
        return oom(r);
    const ads_expr **exprs = NULL; /* made when the first expression shows up */
    for (size_t i = 0; i < n; i++) {
        item it;
        if ((rc = read_item(r, depth + 1, &it)))
            return rc;
        if (it.e && !exprs) {
            exprs = alloc(r, n * sizeof *exprs);
            ads_expr *lits = alloc(r, n * sizeof *lits);
            if (!exprs || !lits)
                return oom(r);
            for (size_t j = 0; j < n; j++)
                exprs[j] = &lits[j];
            for (size_t j = 0; j < i; j++)
                literal_node(&lits[j], &vals[j]);
        }
        if (exprs) {
            if (it.e)
                exprs[i] = it.e;
            else
                literal_node((ads_expr *)exprs[i], &it.v);
        } else {
            vals[i] = it.v;
        }
    }
    if (!exprs) {
        out->v = ads_list(vals, n);
        return 0;
    }
    ads_expr *node = alloc(r, sizeof *node);
    if (!node)
        return oom(r);
    memset(node, 0, sizeof *node);
    node->kind = N_LIST;
    node->u.list.items = exprs;
    node->u.list.n = n;
    out->e = node;
    return 0;
}

/* An ads_record over names / exprs / hashes (n of each, in arena a), with
 * the same open-addressing index the record builder makes. */
static const ads_record *make_record(ads_arena *a, size_t n, const ads_str *names,
                                     const ads_expr *const *exprs, const uint32_t *hashes)
{
    ads_record *rec = ads_arena_alloc(a, sizeof *rec);
    if (!rec)
        return NULL;
    rec->n = n;
    rec->names = names;
    rec->exprs = exprs;
    rec->hashes = hashes;
    rec->slots = NULL;
    rec->cap = 0;
    if (n) {
        size_t cap = 4;
        while (cap < n * 2)
            cap *= 2;
        uint32_t *slots = ads_arena_alloc(a, cap * sizeof *slots);
        if (!slots)
            return NULL;
        memset(slots, 0, cap * sizeof *slots);
        for (size_t i = 0; i < n; i++) {
            size_t j = hashes[i] & (cap - 1);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = (uint32_t)(i + 1);
        }
        rec->slots = slots;
        rec->cap = cap;
    }
    return rec;
}

/* The row's index, when reading a row's map: each key's offset from body
 * must be the one the index gives. */
typedef struct row_index {
    const unsigned char *index;
    unsigned width;
    const unsigned char *body;
    bool ids; /* keys are attribute ids (r->names names them) */
} row_index;

/* The n entries of a map whose header (at at) was just read; the map is at
 * nesting level depth + 1. */
static int read_map(rd *r, const unsigned char *at, size_t n, int depth, item *out,
                    const row_index *ix)
{
    int rc;
    if (depth + 1 > ADS_MAX_DEPTH)
        return corrupt(r, at, "containers nested deeper than %d levels", ADS_MAX_DEPTH);
    /* each entry takes at least 3 bytes: a non-empty key and a value (2
     * with attribute ids for keys) */
    if (n > (size_t)(r->end - r->p) / (ix && ix->ids ? 2 : 3))
        return corrupt(r, at, "map of %zu entries cannot fit in the %zu bytes left", n,
                       (size_t)(r->end - r->p));
    ads_str *names = NULL;
    const ads_expr **exprs = NULL;
    uint32_t *hashes = NULL;
    ads_expr *lits = NULL;
    if (r->arena) {
        names = alloc(r, n * sizeof *names);
        exprs = alloc(r, n * sizeof *exprs);
        hashes = alloc(r, n * sizeof *hashes);
        lits = alloc(r, n * sizeof *lits);
        if (!names || !exprs || !hashes || !lits)
            return oom(r);
    }
    bool any_expr = false;
    const unsigned char *prev = NULL;
    size_t prev_len = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *key_at = r->p;
        if (ix) {
            uint64_t want = get_be(ix->index + i * ix->width, ix->width);
            if ((uint64_t)(key_at - ix->body) != want)
                return corrupt(r, key_at,
                               "the index gives offset %llu for attribute %zu, which is at %zu",
                               (unsigned long long)want, i, (size_t)(key_at - ix->body));
        }
        if ((rc = need(r, key_at, 1)))
            return rc;
        size_t klen;
        const unsigned char *key;
        const char *name;
        if (ix && ix->ids) {
            uint64_t id;
            bool canon;
            unsigned hl = ads_msgpack__id_head(r->p, (size_t)(r->end - r->p), &id, &canon);
            if (!hl)
                return corrupt(r, key_at, "expected an attribute id, found byte 0x%02x", *r->p);
            if (!canon)
                return corrupt(r, key_at, "attribute id %llu not in its shortest form",
                               (unsigned long long)id);
            r->p += hl;
            ads_str nm;
            if ((rc = id_name(r, key_at, id, &nm)))
                return rc;
            key = (const unsigned char *)nm.p;
            klen = nm.len;
            name = nm.p;
            if (r->arena && (r->flags & ADS_MSGPACK_COPY) &&
                !(name = ads_arena_strndup(r->arena, nm.p, nm.len)))
                return oom(r);
        } else {
            unsigned t = *r->p++;
            if ((rc = read_str_head(r, key_at, t, &klen)))
                return rc;
            if (klen == 0)
                return corrupt(r, key_at, "empty attribute name");
            key = r->p;
            if ((rc = take_bytes(r, klen, &name)))
                return rc;
        }
        if (prev && ads_msgpack__name_cmp(prev, prev_len, key, klen) >= 0)
            return corrupt(r, key_at,
                           "attribute '%.*s' is out of order or repeats a name (ignoring case)",
                           (int)(klen > 60 ? 60 : klen), (const char *)key);
        prev = key;
        prev_len = klen;
        item it;
        if ((rc = read_item(r, depth + 1, &it)))
            return rc;
        if (r->arena) {
            names[i].p = name;
            names[i].len = klen;
            hashes[i] = ads_name_hash(name, klen);
            if (it.e) {
                exprs[i] = it.e;
                any_expr = true;
            } else {
                exprs[i] = literal_node(&lits[i], &it.v);
            }
        }
    }
    if (ix) {
        uint64_t last = n ? get_be(ix->index + (n - 1) * ix->width, ix->width) : 0;
        if (ix->width != width_for(last))
            return corrupt(r, at, "index width %u where %u is the smallest that fits", ix->width,
                           width_for(last));
    }
    if (!r->arena) {
        out->v = ads_undefined();
        return 0;
    }
    const ads_record *rec = make_record(r->arena, n, names, exprs, hashes);
    if (!rec)
        return oom(r);
    if (!any_expr) {
        out->v = ads_recordv(rec);
        return 0;
    }
    ads_expr *node = alloc(r, sizeof *node);
    if (!node)
        return oom(r);
    memset(node, 0, sizeof *node);
    node->kind = N_RECORD;
    node->u.rec = rec;
    out->e = node;
    return 0;
}

static int read_double(rd *r, const unsigned char *at, const unsigned char *p, double *out)
{
    uint64_t bits = be64(p);
    double d = double_of(bits);
    if (isnan(d) && bits != CANONICAL_NAN)
        return corrupt(r, at, "NaN with bits 0x%016llx (0x7ff8000000000000 is canonical)",
                       (unsigned long long)bits);
    *out = d;
    return 0;
}

/* An expression text (len bytes at r->p, already bounds-checked). */
static int read_expr_text(rd *r, const unsigned char *at, size_t len, item *out)
{
    if (len == 0)
        return corrupt(r, at, "empty expression text");
    /* the text is as ads_expr_unparse writes it, which escapes every control
     * character inside strings and names and writes no other */
    for (size_t i = 0; i < len; i++)
        if (r->p[i] < 0x20 || r->p[i] == 0x7f)
            return corrupt(r, r->p + i, "control byte 0x%02x in an expression text", r->p[i]);
    const char *text = (const char *)r->p;
    r->p += len;
    ads_arena *a = r->arena;
    if (!a) {
        if (!r->tmp && !(r->tmp = ads_arena_new()))
            return oom(r);
        ads_arena_reset(r->tmp);
        a = r->tmp;
    }
    /* the parser keeps no pointer into the text: nothing to copy */
    const ads_expr *e;
    ads_error perr;
    int rc = ads_expr_parse(&e, a, text, len, &perr);
    if (rc == ADS_ENOMEM)
        return oom(r);
    if (rc)
        return corrupt(r, at, "expression text does not parse (column %d: %s)", perr.column,
                       perr.message);
    /* plain values, lists and records are stored as themselves, never as text */
    if (e->kind == N_LITERAL || e->kind == N_LIST || e->kind == N_RECORD)
        return corrupt(r, at, "expression text '%.*s' is a %s, which is stored as itself",
                       (int)(len > 40 ? 40 : len), text,
                       e->kind == N_LITERAL ? "plain value" : e->kind == N_LIST ? "list"
                                                                                : "record");
    out->e = e;
    return 0;
}

static int read_blob(rd *r, const unsigned char *at, size_t len, int depth, item *out)
{
    int rc;
    if (len == 0)
        return corrupt(r, at, "blob without its flag byte");
    const unsigned char *q = r->p, *qend = r->p + len;
    unsigned flag = *q++;
    if (flag > 1)
        return corrupt(r, at, "blob flag byte %u (0 or 1)", flag);
    const ads_record *meta = NULL;
    if (flag == 1) {
        /* the metadata map, read inside the payload's bounds */
        const unsigned char *save_end = r->end;
        r->p = q;
        r->end = qend;
        const unsigned char *map_at = r->p;
        if ((rc = need(r, map_at, 1))) {
            r->end = save_end;
            return rc;
        }
        unsigned t = *r->p++;
        size_t n;
        item m = {ads_undefined(), NULL};
        rc = read_count(r, map_at, t, 0x80, 0xde, "map", &n);
        if (!rc)
            rc = read_map(r, map_at, n, depth, &m, NULL);
        q = r->p;
        r->end = save_end;
        if (rc)
            return rc;
        if (r->arena)
            meta = m.e ? m.e->u.rec : m.v.u.rec;
    }
    size_t nbytes = (size_t)(qend - q);
    if (nbytes > ADS_MSGPACK_BLOB_MAX)
        return corrupt(r, at, "blob of %zu bytes is over the %zu limit", nbytes,
                       ADS_MSGPACK_BLOB_MAX);
    r->p = q;
    const char *bytes;
    if ((rc = take_bytes(r, nbytes, &bytes)))
        return rc;
    if (!r->arena)
        return 0;
    ads_blob *b = alloc(r, sizeof *b);
    if (!b)
        return oom(r);
    b->bytes.p = bytes;
    b->bytes.len = nbytes;
    b->meta = meta;
    out->v.type = ADS_BLOB;
    out->v.u.blob = b;
    return 0;
}

static int read_ext(rd *r, const unsigned char *at, unsigned t, int depth, item *out)
{
    size_t len;
    int type, rc;
    if ((rc = read_ext_head(r, at, t, &len, &type)))
        return rc;
    const unsigned char *q = r->p;
    double d;
    switch (type) {
    case ADS_MSGPACK_EXT_ERROR:
        if (len != 0)
            return corrupt(r, at, "error value with a %zu-byte payload (empty)", len);
        out->v = ads_errorv();
        return 0;
    case ADS_MSGPACK_EXT_ABSTIME:
        if (len != 12)
            return corrupt(r, at, "AbsTime with a %zu-byte payload (12)", len);
        if ((rc = read_double(r, at, q, &d)))
            return rc;
        out->v = ads_abstime(d, s32_of(be32(q + 8)));
        r->p += 12;
        return 0;
    case ADS_MSGPACK_EXT_RELTIME:
        if (len != 8)
            return corrupt(r, at, "RelTime with a %zu-byte payload (8)", len);
        if ((rc = read_double(r, at, q, &d)))
            return rc;
        out->v = ads_reltime(d);
        r->p += 8;
        return 0;
    case ADS_MSGPACK_EXT_IDENT: {
        if (len != 16)
            return corrupt(r, at, "identifier with a %zu-byte payload (16)", len);
        ads_id id = {be64(q), be64(q + 8)};
        out->v = ads_ident(id);
        r->p += 16;
        return 0;
    }
    case ADS_MSGPACK_EXT_BLOB:
        if (r->scalar_only) {
            r->p = at;
            return NEEDS_ARENA;
        }
        return read_blob(r, at, len, depth, out);
    case ADS_MSGPACK_EXT_EXPR:
        if (r->scalar_only) {
            r->p = at;
            return NEEDS_ARENA;
        }
        return read_expr_text(r, at, len, out);
    case ADS_MSGPACK_EXT_ROW:
        return corrupt(r, at, "a row header where a value belongs");
    default:
        return corrupt(r, at, "unknown extension type %d", type);
    }
}

/*
 * One item at r->p, at nesting depth (the number of containers around it).
 * Scalars always come back as values; containers, blobs and expressions
 * are built only with an arena (else just checked).
 */
static int read_item(rd *r, int depth, item *out)
{
    const unsigned char *at = r->p;
    int rc;
    out->e = NULL;
    if (r->p >= r->end)
        return corrupt(r, at, "an item is missing (the input ends)");
    unsigned t = *r->p++;
    if (t <= 0x7f) {
        out->v = ads_int((int64_t)t);
        return 0;
    }
    if (t >= 0xe0) {
        out->v = ads_int((int64_t)t - 256);
        return 0;
    }
    if ((t & 0xe0) == 0xa0 || t == 0xd9 || t == 0xda || t == 0xdb) {
        size_t len;
        const char *p;
        if ((rc = read_str_head(r, at, t, &len)) || (rc = take_bytes(r, len, &p)))
            return rc;
        out->v = ads_string(p, len);
        return 0;
    }
    if ((t & 0xf0) == 0x80 || (t & 0xf0) == 0x90 || (t >= 0xdc && t <= 0xdf)) {
        if (r->scalar_only) {
            r->p = at;
            return NEEDS_ARENA;
        }
        size_t n;
        bool map = (t & 0xf0) == 0x80 || t >= 0xde;
        if (map)
            return (rc = read_count(r, at, t, 0x80, 0xde, "map", &n))
                       ? rc : read_map(r, at, n, depth, out, NULL);
        return (rc = read_count(r, at, t, 0x90, 0xdc, "array", &n))
                   ? rc : read_array(r, at, n, depth, out);
    }
    uint64_t u;
    int64_t s;
    switch (t) {
    case 0xc0:
        out->v = ads_undefined();
        return 0;
    case 0xc2:
    case 0xc3:
        out->v = ads_bool(t == 0xc3);
        return 0;
    case 0xcb: {
        double d;
        if ((rc = need(r, at, 8)) || (rc = read_double(r, at, r->p, &d)))
            return rc;
        r->p += 8;
        out->v = ads_real(d);
        return 0;
    }
    case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        unsigned w = 1u << (t - 0xcc);
        static const uint64_t least[] = {128, 256, 65536, (uint64_t)1 << 32};
        if ((rc = need(r, at, w)))
            return rc;
        u = get_be(r->p, w);
        r->p += w;
        if (u < least[t - 0xcc])
            return corrupt(r, at, "uint%u holding %llu (a shorter form is canonical)", w * 8,
                           (unsigned long long)u);
        if (u > (uint64_t)INT64_MAX)
            return corrupt(r, at, "integer %llu does not fit 64 signed bits",
                           (unsigned long long)u);
        out->v = ads_int((int64_t)u);
        return 0;
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        unsigned w = 1u << (t - 0xd0);
        static const int64_t most[] = {-33, -129, -32769, (int64_t)INT32_MIN - 1};
        if ((rc = need(r, at, w)))
            return rc;
        u = get_be(r->p, w);
        r->p += w;
        /* sign-extend w bytes without shifting into the sign bit */
        if (w < 8 && (u >> (w * 8 - 1)))
            u |= ~(uint64_t)0 << (w * 8);
        s = s64_of(u);
        if (s > most[t - 0xd0])
            return corrupt(r, at, "int%u holding %lld (a shorter form is canonical)", w * 8,
                           (long long)s);
        out->v = ads_int(s);
        return 0;
    }
    case 0xc7: case 0xc8: case 0xc9:
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return read_ext(r, at, t, depth, out);
    case 0xca:
        return corrupt(r, at, "float32 (rows hold float64 only)");
    case 0xc4: case 0xc5: case 0xc6:
        return corrupt(r, at, "bin item (rows hold no bin items)");
    default: /* 0xc1 */
        return corrupt(r, at, "byte 0xc1 is never used in MessagePack");
    }
}

/* ---- rows ---- */

typedef struct row_head {
    row_index ix;
    size_t n;
} row_head;

/* The usual header of a row, checked in one go: its index in an ext8
 * (3..255 bytes of payload, 4 and 16 having fixext forms) and its map a
 * fixmap or a map16. 1 with h and r->p as read_row_head leaves them; 0 for
 * anything else, which read_row_head reads and, if it is wrong, names. */
static int row_head_usual(rd *r, row_head *h)
{
    const unsigned char *p = r->p;
    size_t left = (size_t)(r->end - p);
    if (left < 7 || p[0] != 0x92 || p[1] != 0xc7 || (int8_t)p[3] != ADS_MSGPACK_EXT_ROW)
        return 0;
    size_t plen = p[2];
    const unsigned char *q = p + 4, *map = q + plen;
    unsigned width = q[1];
    if (plen < 3 || plen == 4 || plen == 8 || plen == 16 || left - 4 <= plen ||
        !(q[0] == ADS_MSGPACK_VERSION || (q[0] == ADS_MSGPACK_VERSION_IDS && r->names)) ||
        !(width == 1 || width == 2 || width == 4) || (plen - 2) % width)
        return 0;
    size_t n, mh;
    if ((map[0] & 0xf0) == 0x80) {
        n = map[0] & 15;
        mh = 1;
    } else if (map[0] == 0xde && left - 4 - plen >= 3 && (n = be16(map + 1)) >= 16) {
        mh = 3;
    } else {
        return 0;
    }
    if (n != (plen - 2) / width)
        return 0;
    h->n = n;
    h->ix.index = q + 2;
    h->ix.width = width;
    h->ix.body = map;
    h->ix.ids = q[0] == ADS_MSGPACK_VERSION_IDS;
    r->p = map + mh;
    return 1;
}

/* The header of a row at r->p, through the map header. */
static int read_row_head(rd *r, row_head *h)
{
    const unsigned char *at = r->p;
    int rc;
    if (row_head_usual(r, h))
        return 0;
    if ((rc = need(r, at, 1)))
        return rc;
    if (*r->p != 0x92)
        return corrupt(r, at, "a row starts with 0x92 (an array of two), not 0x%02x", *r->p);
    r->p++;
    const unsigned char *ext_at = r->p;
    if ((rc = need(r, ext_at, 1)))
        return rc;
    unsigned t = *r->p++;
    size_t plen;
    int type;
    if ((rc = read_ext_head(r, ext_at, t, &plen, &type)))
        return rc;
    if (type != ADS_MSGPACK_EXT_ROW)
        return corrupt(r, ext_at, "extension type %d where the row header (type %d) belongs",
                       type, ADS_MSGPACK_EXT_ROW);
    if (plen < 2)
        return corrupt(r, ext_at, "row header of %zu bytes (at least 2)", plen);
    const unsigned char *q = r->p;
    if (q[0] == ADS_MSGPACK_VERSION_IDS && !r->names)
        return ads_error_set(r->err, ADS_EVERSION,
                             "msgpack: a row of format version %d (attribute ids) is read "
                             "through its store's name table, at byte %zu",
                             ADS_MSGPACK_VERSION_IDS, (size_t)(q - r->base));
    if (q[0] != ADS_MSGPACK_VERSION && q[0] != ADS_MSGPACK_VERSION_IDS)
        return ads_error_set(r->err, ADS_EVERSION,
                             "msgpack: row format version %u is not supported (this build "
                             "reads versions %d and %d) at byte %zu",
                             q[0], ADS_MSGPACK_VERSION, ADS_MSGPACK_VERSION_IDS,
                             (size_t)(q - r->base));
    unsigned width = q[1];
    if (width != 1 && width != 2 && width != 4)
        return corrupt(r, q + 1, "index width %u (1, 2 or 4)", width);
    if ((plen - 2) % width)
        return corrupt(r, ext_at, "row index of %zu bytes is not a whole number of %u-byte offsets",
                       plen - 2, width);
    r->p += plen;
    const unsigned char *map_at = r->p;
    if ((rc = need(r, map_at, 1)))
        return rc;
    t = *r->p++;
    if ((rc = read_count(r, map_at, t, 0x80, 0xde, "map", &h->n)))
        return rc;
    if (h->n != (plen - 2) / width)
        return corrupt(r, map_at, "map of %zu attributes under an index of %zu", h->n,
                       (plen - 2) / width);
    h->ix.index = q + 2;
    h->ix.width = width;
    h->ix.body = map_at;
    h->ix.ids = q[0] == ADS_MSGPACK_VERSION_IDS;
    return 0;
}

/* A whole row: header, map (checked against the index), nothing after. */
static int read_row(rd *r, item *out)
{
    row_head h;
    int rc;
    out->e = NULL;
    if ((rc = read_row_head(r, &h)) || (rc = read_map(r, h.ix.body, h.n, 0, out, &h.ix)))
        return rc;
    if (r->p != r->end)
        return corrupt(r, r->p, "%zu bytes after the end of the row", (size_t)(r->end - r->p));
    return 0;
}

static void rd_init(rd *r, const void *bytes, size_t len, ads_arena *a, unsigned flags,
                    ads_error *err)
{
    r->base = r->p = bytes;
    r->end = r->p + len;
    r->arena = a;
    r->tmp = NULL;
    r->flags = flags;
    r->scalar_only = false;
    r->names = NULL;
    r->err = err;
}

int ads_msgpack__check_row(const void *bytes, size_t len, const ads_msgpack_names *names,
                           ads_error *err)
{
    if (!bytes && len)
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL bytes");
    rd r;
    item it;
    rd_init(&r, bytes ? bytes : "", len, NULL, 0, err);
    r.names = names;
    int rc = read_row(&r, &it);
    ads_arena_free(r.tmp);
    return rc;
}

int ads_msgpack_check(const void *bytes, size_t len, ads_error *err)
{
    return ads_msgpack__check_row(bytes, len, NULL, err);
}

int ads_msgpack_decode_record(const ads_record **out, ads_arena *a, const void *bytes,
                              size_t len, unsigned flags, ads_error *err)
{
    return ads_msgpack__decode_row(out, a, bytes, len, NULL, flags, err);
}

int ads_msgpack__decode_row(const ads_record **out, ads_arena *a, const void *bytes, size_t len,
                            const ads_msgpack_names *names, unsigned flags, ads_error *err)
{
    if (!out || !a || (!bytes && len))
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    rd r;
    item it;
    rd_init(&r, bytes ? bytes : "", len, a, flags, err);
    r.names = names;
    int rc = read_row(&r, &it);
    if (rc)
        return rc;
    *out = it.e ? it.e->u.rec : it.v.u.rec;
    return 0;
}

/* One item filling all of the input. */
static int read_whole_item(rd *r, item *it)
{
    int rc = read_item(r, 0, it);
    if (!rc && r->p != r->end)
        rc = corrupt(r, r->p, "%zu bytes after the end of the value", (size_t)(r->end - r->p));
    return rc;
}

/* An item as a value: lists of values, records (members as they are). */
static int item_value(rd *r, const item *it, ads_value *out)
{
    if (!it->e) {
        *out = it->v;
        return 0;
    }
    const ads_expr *e = it->e;
    if (e->kind == N_RECORD) {
        *out = ads_recordv(e->u.rec);
        return 0;
    }
    if (e->kind == N_LIST) {
        size_t n = e->u.list.n;
        ads_value *vals = alloc(r, n * sizeof *vals);
        if (!vals)
            return oom(r);
        for (size_t i = 0; i < n; i++) {
            const ads_expr *x = e->u.list.items[i];
            item sub = {ads_undefined(), x->kind == N_LITERAL ? NULL : x};
            if (x->kind == N_LITERAL)
                sub.v = x->u.lit;
            int rc = item_value(r, &sub, &vals[i]);
            if (rc)
                return rc;
        }
        *out = ads_list(vals, n);
        return 0;
    }
    return ads_error_set(r->err, ADS_EINVAL,
                         "msgpack: the bytes hold an unevaluated expression where a value is "
                         "expected");
}

int ads_msgpack_decode_value(ads_value *out, ads_arena *a, const void *bytes, size_t len,
                             unsigned flags, ads_error *err)
{
    if (!out || !a || (!bytes && len))
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    rd r;
    item it;
    rd_init(&r, bytes ? bytes : "", len, a, flags, err);
    int rc = read_whole_item(&r, &it);
    return rc ? rc : item_value(&r, &it, out);
}

int ads_msgpack_decode_expr(const ads_expr **out, ads_arena *a, const void *bytes, size_t len,
                            unsigned flags, ads_error *err)
{
    if (!out || !a || (!bytes && len))
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    rd r;
    item it;
    rd_init(&r, bytes ? bytes : "", len, a, flags, err);
    int rc = read_whole_item(&r, &it);
    if (rc)
        return rc;
    if (it.e) {
        *out = it.e;
        return 0;
    }
    return ads_expr_literal(out, a, &it.v, err);
}

/* ======================================================================== */
/* The view                                                                 */
/* ======================================================================== */

int ads_msgpack_view_init(ads_msgpack_view *mv, const void *bytes, size_t len, ads_arena *arena,
                          ads_error *err)
{
    if (!arena)
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    int rc = ads_msgpack__view_open(mv, bytes, len, NULL, arena, err);
    if (!rc)
        ads__prefetch(bytes, len); /* lookups read keys and values all over it */
    return rc;
}

int ads_msgpack__view_open(ads_msgpack_view *mv, const void *bytes, size_t len,
                           const ads_msgpack_names *names, ads_arena *arena, ads_error *err)
{
    /* arena NULL: a view whose values are not looked up (entries only) */
    if (!mv || (!bytes && len))
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    rd r;
    row_head h;
    rd_init(&r, bytes ? bytes : "", len, NULL, 0, err);
    r.names = names;
    int rc = read_row_head(&r, &h);
    if (rc)
        return rc;
    mv->row = r.base;
    mv->body = h.ix.body;
    mv->body_len = (size_t)(r.end - h.ix.body);
    mv->index = h.ix.index;
    mv->n = h.n;
    mv->width = h.ix.width;
    mv->arena = arena;
    mv->slots = NULL;
    mv->names = h.ix.ids ? names : NULL;
    return 0;
}

size_t ads_msgpack_view_size(const ads_msgpack_view *mv)
{
    return mv->n;
}

/* A bounds-checked key of the view. */
typedef struct vkey {
    size_t at;              /* offset (from body) of the key's header */
    const unsigned char *p; /* the name */
    size_t len;
    size_t value;           /* offset (from body) of the value after it */
} vkey;

static inline size_t index_off(const ads_msgpack_view *mv, size_t i)
{
    return ads_msgpack__index_off(mv, i);
}

/* The key at offset off of a row with attribute ids: 0, 1 for bytes that
 * are no id, or an error for an id the name table does not hold. */
static int id_key(const ads_msgpack_view *mv, size_t off, vkey *k, ads_error *err)
{
    uint64_t id;
    bool canon;
    unsigned hl = ads_msgpack__id_head(mv->body + off, mv->body_len - off, &id, &canon);
    if (!hl)
        return 1;
    ads_str nm;
    if (mv->names->name(mv->names, id, &nm, err))
        return ads_error_set(err, ADS_ECORRUPT,
                             "msgpack: attribute id %llu is not in the store's name table at "
                             "byte %zu",
                             (unsigned long long)id, (size_t)(mv->body - mv->row) + off);
    k->at = off;
    k->p = (const unsigned char *)nm.p;
    k->len = nm.len;
    k->value = off + hl;
    return 0;
}

static int view_key(const ads_msgpack_view *mv, size_t i, vkey *k, ads_error *err)
{
    size_t off = index_off(mv, i);
    const unsigned char *b = mv->body;
    size_t left = mv->body_len;
    size_t hl, len;
    if (off >= left)
        goto bad;
    if (mv->names) {
        int rc = id_key(mv, off, k, err);
        if (rc <= 0)
            return rc;
        goto bad;
    }
    unsigned t = b[off];
    if ((t & 0xe0) == 0xa0) {
        hl = 1;
        len = t & 31;
    } else if (t == 0xd9 && left - off > 1) {
        hl = 2;
        len = b[off + 1];
    } else if (t == 0xda && left - off > 2) {
        hl = 3;
        len = be16(b + off + 1);
    } else if (t == 0xdb && left - off > 4) {
        hl = 5;
        len = be32(b + off + 1);
    } else {
        goto bad;
    }
    if (left - off - hl < len)
        goto bad;
    k->at = off;
    k->p = b + off + hl;
    k->len = len;
    k->value = off + hl + len;
    return 0;
bad:
    return ads_error_set(err, ADS_ECORRUPT,
                         "msgpack: the index entry of attribute %zu (offset %zu) is not a name "
                         "in the row at byte %zu",
                         i, off, (size_t)(mv->index - mv->row) + i * mv->width);
}

/* Attribute i's bytes (name and value) in a's body: [*from, *to), false
 * when the index does not describe the body. */
static bool entry_span(const ads_msgpack_view *mv, size_t i, size_t *from, size_t *to)
{
    *from = index_off(mv, i);
    *to = i + 1 < mv->n ? index_off(mv, i + 1) : mv->body_len;
    return *from <= *to && *to <= mv->body_len;
}

/* Inlined everywhere: a call costs more than its fast paths (a frame
 * spilled around the name table's call), and every lookup, name and
 * comparison of a row goes through it. */
static inline __attribute__((always_inline)) int key_at(const ads_msgpack_view *mv, size_t i,
                                                        vkey *k, ads_error *err);

/* Attribute i's key and the end of its value in mv's body: false when the
 * index does not describe the body (the caller's full path reports it). */
static inline __attribute__((always_inline)) bool entry_at(const ads_msgpack_view *mv, size_t i,
                                                         vkey *k, size_t *end)
{
    if (key_at(mv, i, k, NULL))
        return false;
    *end = i + 1 < mv->n ? index_off(mv, i + 1) : mv->body_len;
    return *end > k->value && *end <= mv->body_len;
}

/* same_except for views whose keys are spelled differently (names in one,
 * attribute ids in the other): attribute by attribute, the same name's
 * bytes and the same value bytes. This is how a snapshot's record (names)
 * is found unchanged against its stored row (ids), once per record. */
static bool same_by_entries(const ads_msgpack_view *a, const size_t *skip, size_t nskip,
                            const ads_msgpack_view *b)
{
    size_t j = 0, s = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (s < nskip && skip[s] == i) {
            s++;
            continue;
        }
        vkey ka, kb;
        size_t ae, be;
        if (j >= b->n || !entry_at(a, i, &ka, &ae) || !entry_at(b, j, &kb, &be) ||
            ka.len != kb.len || ae - ka.value != be - kb.value ||
            !ads_bytes_same(ka.p, kb.p, ka.len) ||
            !ads_bytes_same(a->body + ka.value, b->body + kb.value, ae - ka.value))
            return false;
        j++;
    }
    return s == nskip && j == b->n;
}

bool ads_msgpack_view_same_except(const ads_msgpack_view *a, const size_t *skip, size_t nskip,
                                  const ads_msgpack_view *b)
{
    if (!a || !b || a->n < nskip || a->n - nskip != b->n)
        return false;
    if (b->n == 0)
        return true;
    if (!a->names != !b->names)
        return same_by_entries(a, skip, nskip, b);
    size_t bat, bend, x;
    if (!entry_span(b, 0, &bat, &x) || !entry_span(b, b->n - 1, &x, &bend))
        return false;
    /* the runs of a's attributes between the skipped ones are contiguous
     * bytes, and must follow each other in b's */
    size_t i = 0;
    for (size_t j = 0; j <= nskip; j++) {
        size_t stop = j < nskip ? skip[j] : a->n;
        if (stop < i || stop > a->n)
            return false;
        if (stop > i) {
            size_t from, to, y;
            if (!entry_span(a, i, &from, &y) || !entry_span(a, stop - 1, &y, &to) ||
                to - from > bend - bat || memcmp(a->body + from, b->body + bat, to - from) != 0)
                return false;
            bat += to - from;
        }
        i = stop + 1;
    }
    return bat == bend;
}

bool ads_msgpack__same_as_ids(const ads_msgpack_view *a, const uint64_t *ids, const size_t *vat,
                              const size_t *vend, const size_t *skip, size_t nskip,
                              const ads_msgpack_view *b)
{
    if (!b->names || a->n < nskip || a->n - nskip != b->n)
        return false;
    if (b->n == 0)
        return nskip == a->n;
    /* b's entries lie back to back from its first key to the row's end: a
     * walk through them reads no index but the first offset */
    size_t at = index_off(b, 0), end = b->body_len, s = 0;
    if (at > end)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (s < nskip && skip[s] == i) {
            s++;
            continue;
        }
        unsigned char k[5];
        size_t kl = ads_msgpack__put_id(k, ids[i]), vl = vend[i] - vat[i];
        if (end - at < kl || end - at - kl < vl || b->body[at] != k[0] ||
            (kl > 1 && memcmp(b->body + at + 1, k + 1, kl - 1) != 0) ||
            !ads_bytes_same(a->body + vat[i], b->body + at + kl, vl))
            return false;
        at += kl + vl;
    }
    return s == nskip && at == end;
}

int ads_msgpack_view_name(ads_str *out, const ads_msgpack_view *mv, size_t i, ads_error *err)
{
    if (!out || !mv || i >= mv->n)
        return ads_error_set(err, ADS_EINVAL, "msgpack: attribute %zu out of range", i);
    vkey k;
    int rc = key_at(mv, i, &k, err);
    if (rc)
        return rc;
    out->p = (const char *)k.p;
    out->len = k.len;
    return 0;
}

/* The key at index i: short names (fixstr, the usual case) are read
 * inline; anything else goes through view_key, which also reports bad
 * offsets. */
static inline __attribute__((always_inline)) int key_at(const ads_msgpack_view *mv, size_t i,
                                                        vkey *k, ads_error *err)
{
    size_t off = index_off(mv, i);
    unsigned t;
    if (mv->names) {
        ads_str nm;
        if (off < mv->body_len && (t = mv->body[off]) <= 0x7f &&
            mv->names->name(mv->names, t, &nm, NULL) == 0) {
            k->at = off;
            k->p = (const unsigned char *)nm.p;
            k->len = nm.len;
            k->value = off + 1;
            return 0;
        }
        return view_key(mv, i, k, err);
    }
    if (off < mv->body_len && ((t = mv->body[off]) & 0xe0) == 0xa0 &&
        mv->body_len - off - 1 >= (t & 31)) {
        k->at = off;
        k->p = mv->body + off + 1;
        k->len = t & 31;
        k->value = off + 1 + k->len;
        return 0;
    }
    return view_key(mv, i, k, err);
}

/* Compare name with the key at index i (case folded): *c receives <0, 0 or
 * >0 and k the key; 0, or an error for a bad key. */
static inline int key_cmp(const ads_msgpack_view *mv, size_t i, const unsigned char *nm,
                          size_t len, vkey *k, int *c, ads_error *err)
{
    int rc = key_at(mv, i, k, err);
    if (rc)
        return rc;
    if (len == k->len && memcmp(nm, k->p, len) == 0) { /* written the same way */
        *c = 0;
        return 0;
    }
    size_t m = len < k->len ? len : k->len;
    for (size_t j = 0; j < m; j++) {
        unsigned char x = ads_msgpack__fold(nm[j]), y = ads_msgpack__fold(k->p[j]);
        if (x != y) {
            *c = x < y ? -1 : 1;
            return 0;
        }
    }
    *c = len < k->len ? -1 : len > k->len;
    return 0;
}

/* Search for name: 1 (with *idx, *k), 0 absent, or an error. The name
 * index is sorted by folded bytes and names are distinct ignoring case, so a
 * folded comparison both orders and finds. The index hint (where the name
 * was found in an earlier row; ignored if out of range) is tried first, and
 * then its neighbour on the side the name lies (rows of one source share
 * their names, give or take one), before a binary search of what is left. */
static inline int view_find(const ads_msgpack_view *mv, const char *name, size_t len,
                            size_t hint, size_t *idx, vkey *k, ads_error *err)
{
    const unsigned char *nm = (const unsigned char *)name;
    size_t lo = 0, hi = mv->n;
    for (int tries = 0; tries < 2 && hint >= lo && hint < hi; tries++) {
        int c, rc = key_cmp(mv, hint, nm, len, k, &c, err);
        if (rc)
            return rc;
        if (c == 0) {
            *idx = hint;
            return 1;
        }
        if (c < 0) {
            hi = hint;
            hint--; /* wraps past 0 to SIZE_MAX: out of range */
        } else {
            lo = hint + 1;
            hint++;
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c, rc = key_cmp(mv, mid, nm, len, k, &c, err);
        if (rc)
            return rc;
        if (c == 0) {
            *idx = mid;
            return 1;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

/* The common scalars decoded in place (the fast path of a lookup): 1 done,
 * 0 for anything else (read_item then reads it, with every check). */
static inline int quick_scalar(const unsigned char *p, size_t left, ads_value *out)
{
    unsigned t = p[0];
    if (t <= 0x7f) {
        *out = ads_int((int64_t)t);
        return 1;
    }
    if ((t & 0xe0) == 0xa0) {
        size_t n = t & 31;
        if (left - 1 < n)
            return 0;
        *out = ads_string((const char *)p + 1, n);
        return 1;
    }
    if (t >= 0xe0) {
        *out = ads_int((int64_t)t - 256);
        return 1;
    }
    switch (t) {
    case 0xc2:
    case 0xc3:
        *out = ads_bool(t == 0xc3);
        return 1;
    case 0xc0:
        *out = ads_undefined();
        return 1;
    case 0xd9: /* str8: names of hosts and slots often pass 31 bytes */
        if (left < 2 || p[1] < 32 || left - 2 < p[1])
            return 0;
        *out = ads_string((const char *)p + 2, p[1]);
        return 1;
    case 0xcc:
        if (left < 2 || p[1] < 128)
            return 0;
        *out = ads_int(p[1]);
        return 1;
    case 0xcb:
        if (left < 9 || isnan(double_of(be64(p + 1))))
            return 0;
        *out = ads_real(double_of(be64(p + 1)));
        return 1;
    case 0xcd:
        if (left < 3 || be16(p + 1) < 256)
            return 0;
        *out = ads_int(be16(p + 1));
        return 1;
    case 0xce:
        if (left < 5 || be32(p + 1) < 65536)
            return 0;
        *out = ads_int(be32(p + 1));
        return 1;
    case 0xc7: /* ext 8: an AbsTime (every record's _Timestamp) */
        if (left < 15 || p[1] != 12 || p[2] != ADS_MSGPACK_EXT_ABSTIME ||
            isnan(double_of(be64(p + 3))))
            return 0;
        *out = ads_abstime(double_of(be64(p + 3)), s32_of(be32(p + 11)));
        return 1;
    default:
        return 0;
    }
}

int ads_msgpack__quick(ads_value *value, const ads_msgpack_view *mv, const char *name, size_t len,
                       uint32_t hint)
{
    if (hint >= mv->n || (mv->slots && mv->slots[hint]))
        return 0;
    size_t off = index_off(mv, hint);
    if (off >= mv->body_len)
        return 0;
    unsigned t = mv->body[off];
    if (mv->names) {
        ads_str nm;
        if (t > 0x7f || mv->names->name(mv->names, t, &nm, NULL) || nm.len != len ||
            memcmp(nm.p, name, len) != 0)
            return 0;
        return off + 1 < mv->body_len &&
               quick_scalar(mv->body + off + 1, mv->body_len - off - 1, value);
    }
    if ((t & 0xe0) != 0xa0 || (t & 31) != len || mv->body_len - off - 1 < len)
        return 0;
    const unsigned char *k = mv->body + off + 1;
    for (size_t i = 0; i < len; i++)
        if (k[i] != (unsigned char)name[i])
            return 0;
    size_t at = off + 1 + len;
    return at < mv->body_len && quick_scalar(mv->body + at, mv->body_len - at, value);
}

/* The size of the item at p when quick_scalar reads it (it may still
 * decline it: a real that is NaN, an integer not in its shortest form), 0
 * for anything else. */
static size_t quick_size(const unsigned char *p, size_t left)
{
    unsigned t = p[0];
    if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3)
        return 1;
    if ((t & 0xe0) == 0xa0)
        return 1 + (t & 31);
    switch (t) {
    case 0xd9:
        return left >= 2 ? 2 + (size_t)p[1] : 0;
    case 0xcc:
        return 2;
    case 0xcb:
        return 9;
    case 0xcd:
        return 3;
    case 0xce:
        return 5;
    case 0xc7:
        return left >= 2 && p[1] == 12 ? 15 : 0;
    default:
        return 0;
    }
}

int ads_msgpack__scalar_entry(const unsigned char **p, size_t *n, const ads_msgpack_view *mv,
                              const char *name, size_t len, uint32_t *hint)
{
    size_t i = 0;
    vkey k;
    int rc = view_find(mv, name, len, *hint, &i, &k, NULL);
    if (rc <= 0)
        return rc < 0 ? -1 : 0;
    *hint = (uint32_t)i;
    if (mv->slots && mv->slots[i])
        return -1; /* decoded with checks: not one of quick_scalar's */
    size_t end = i + 1 < mv->n ? index_off(mv, i + 1) : mv->body_len;
    if (end > mv->body_len || end <= k.value)
        return -1;
    const unsigned char *v = mv->body + k.value;
    size_t vl = end - k.value;
    ads_value x;
    if (quick_size(v, vl) != vl || !quick_scalar(v, vl, &x))
        return -1;
    *p = mv->body + k.at;
    *n = end - k.at;
    return 1;
}

bool ads_msgpack__entry_bytes(const unsigned char **p, size_t *n, const ads_msgpack_view *mv,
                              size_t i)
{
    size_t from, to;
    if (i >= mv->n || !entry_span(mv, i, &from, &to))
        return false;
    *p = mv->body + from;
    *n = to - from;
    return true;
}

/* The value of attribute i, whose key is k: a plain value, or what the
 * view decoded of it once (see ads_msgpack_view_init). 1, or an error. */
static int view_decode(ads_value *value, const ads_expr **expr, ads_msgpack_view *mv, size_t i,
                       const vkey *kp, ads_error *err)
{
    vkey k = *kp;
    const char *name = (const char *)k.p;
    size_t len = k.len;
    int rc;
    *expr = NULL;
    if (mv->slots && mv->slots[i]) {
        const ads_expr *e = mv->slots[i];
        if (e->kind == N_LITERAL)
            *value = e->u.lit;
        else
            *expr = e;
        return 1;
    }
    if (k.value < mv->body_len && quick_scalar(mv->body + k.value, mv->body_len - k.value, value))
        return 1;
    /* the value ends where the next key starts (or the row ends) */
    size_t end = mv->body_len;
    if (i + 1 < mv->n && mv->names) {
        /* keyed by ids: the next key's offset is all this needs (its id is
         * resolved when that attribute is read) */
        end = index_off(mv, i + 1);
        if (end > mv->body_len)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "msgpack: the index entry of attribute %zu (offset %zu) is past "
                                 "the row's end at byte %zu",
                                 i + 1, end, (size_t)(mv->index - mv->row) + (i + 1) * mv->width);
    } else if (i + 1 < mv->n) {
        vkey next;
        if ((rc = view_key(mv, i + 1, &next, err)))
            return rc;
        end = next.at;
    }
    if (end <= k.value)
        return ads_error_set(err, ADS_ECORRUPT,
                             "msgpack: attribute '%.*s' has no value at byte %zu",
                             (int)(len > 60 ? 60 : len), name,
                             (size_t)(mv->body - mv->row) + k.value);
    rd r;
    item it;
    rd_init(&r, mv->row, (size_t)(mv->body - mv->row) + end, NULL, 0, err);
    r.p = mv->body + k.value;
    r.scalar_only = true;
    rc = read_item(&r, 1, &it);
    if (rc == NEEDS_ARENA) {
        r.scalar_only = false;
        r.arena = mv->arena;
        rc = read_item(&r, 1, &it);
    }
    if (rc)
        return rc;
    if (r.p != r.end)
        return ads_error_set(err, ADS_ECORRUPT,
                             "msgpack: attribute '%.*s' has %zu stray bytes after its value at "
                             "byte %zu",
                             (int)(len > 60 ? 60 : len), name, (size_t)(r.end - r.p),
                             (size_t)(r.p - mv->row));
    if (r.arena) {
        /* decoded once: later lookups (and evaluation's cycle check) see the
         * same value or the same expression */
        if (!mv->slots) {
            mv->slots = ads_arena_alloc(mv->arena, mv->n * sizeof *mv->slots);
            if (!mv->slots)
                return ads_error_set(err, ADS_ENOMEM, "msgpack: out of memory");
            memset(mv->slots, 0, mv->n * sizeof *mv->slots);
        }
        if (!it.e) {
            ads_expr *node = ads_arena_alloc(mv->arena, sizeof *node);
            if (!node)
                return ads_error_set(err, ADS_ENOMEM, "msgpack: out of memory");
            mv->slots[i] = literal_node(node, &it.v);
        } else {
            mv->slots[i] = it.e;
        }
    }
    if (it.e)
        *expr = it.e;
    else
        *value = it.v;
    return 1;
}

int ads_msgpack_view_lookup(ads_value *value, const ads_expr **expr, ads_msgpack_view *mv,
                            const char *name, size_t len, ads_error *err)
{
    if (!mv || (!name && len) || !value || !expr)
        return ads_error_set(err, ADS_EINVAL, "msgpack: NULL argument");
    return ads_msgpack__lookup(value, expr, mv, name, len, NULL, err);
}

int ads_msgpack__lookup(ads_value *value, const ads_expr **expr, ads_msgpack_view *mv,
                        const char *name, size_t len, _Atomic uint32_t *hint, ads_error *err)
{
    size_t i = 0, h = hint ? atomic_load_explicit(hint, memory_order_relaxed) : SIZE_MAX;
    vkey k;
    int rc = view_find(mv, name, len, h, &i, &k, err);
    if (rc <= 0)
        return rc;
    if (hint && i != h)
        atomic_store_explicit(hint, (uint32_t)i, memory_order_relaxed);
    return view_decode(value, expr, mv, i, &k, err);
}

int ads_msgpack__lookup_id(ads_value *value, const ads_expr **expr, ads_msgpack_view *mv,
                           const char *name, size_t len, uint64_t id, _Atomic uint32_t *hint,
                           ads_error *err)
{
    size_t h = hint ? atomic_load_explicit(hint, memory_order_relaxed) : SIZE_MAX;
    if (mv->names && h < mv->n) {
        size_t off = index_off(mv, h);
        uint64_t got;
        bool canon;
        unsigned hl = off < mv->body_len
                          ? ads_msgpack__id_head(mv->body + off, mv->body_len - off, &got, &canon)
                          : 0;
        if (hl && got == id) {
            vkey k = {off, (const unsigned char *)name, len, off + hl};
            return view_decode(value, expr, mv, h, &k, err);
        }
    }
    return ads_msgpack__lookup(value, expr, mv, name, len, hint, err);
}

int ads_msgpack_view_attr(ads_str *name, ads_value *value, const ads_expr **expr,
                          ads_msgpack_view *mv, size_t i, ads_error *err)
{
    if (!mv || !name || !value || !expr || i >= mv->n)
        return ads_error_set(err, ADS_EINVAL, "msgpack: attribute %zu out of range", i);
    vkey k;
    int rc = key_at(mv, i, &k, err);
    if (rc)
        return rc;
    name->p = (const char *)k.p;
    name->len = k.len;
    if (!mv->slots && k.value < mv->body_len &&
        quick_scalar(mv->body + k.value, mv->body_len - k.value, value)) {
        *expr = NULL;
        return 0;
    }
    rc = view_decode(value, expr, mv, i, &k, err);
    return rc < 0 ? rc : 0;
}

static int view_lookup(const void *self, const char *name, size_t len, uint32_t hash,
                       ads_arena *arena, ads_value *value, const ads_expr **expr)
{
    /* the index is ordered by name, not by hash: a binary search needs no
     * hash, and keeping hashes out of the bytes keeps rows independent of
     * the hash function. Decoding goes to the view's own arena, so that an
     * attribute decoded once stays the same object for the whole life of
     * the view (see ads_msgpack_view_init). */
    (void)hash;
    (void)arena;
    /* self is the ads_msgpack_view that ads_msgpack_view_get was given,
     * which is not const: its cache may change */
    return ads_msgpack_view_lookup(value, expr, (ads_msgpack_view *)self, name, len, NULL);
}

const ads_view_ops ads_msgpack__view_ops = {view_lookup};

ads_view ads_msgpack_view_get(ads_msgpack_view *mv, const ads_view *parent)
{
    ads_view v = {&ads_msgpack__view_ops, mv, parent};
    return v;
}

int ads_msgpack__view_entry(const ads_msgpack_view *mv, size_t i, ads_str *name, size_t *kat,
                            size_t *value_at, size_t *end, ads_error *err)
{
    vkey k;
    int rc = key_at(mv, i, &k, err);
    if (rc)
        return rc;
    size_t e = i + 1 < mv->n ? index_off(mv, i + 1) : mv->body_len;
    if (e <= k.value || e > mv->body_len)
        return ads_error_set(err, ADS_ECORRUPT,
                             "msgpack: the row index is out of order at attribute %zu", i);
    name->p = (const char *)k.p;
    name->len = k.len;
    *kat = k.at;
    *value_at = k.value;
    *end = e;
    return 0;
}

bool ads_msgpack__row_has_ids(const void *bytes, size_t len)
{
    /* 92, the header extension's tag (and its length and type), version */
    const unsigned char *p = bytes;
    if (len < 4 || p[0] != 0x92)
        return false;
    size_t at = p[1] >= 0xd4 && p[1] <= 0xd8 ? 3 : p[1] == 0xc7 ? 4 : p[1] == 0xc8 ? 5 : 7;
    return at < len && p[at] == ADS_MSGPACK_VERSION_IDS;
}

int ads_msgpack__entries(const ads_msgpack_view *mv, ads_str *names, size_t *vat, size_t *vend,
                         ads_error *err)
{
    size_t n = mv->n;
    const unsigned char *b = mv->body;
    for (size_t i = 0; i < n; i++) {
        size_t off = index_off(mv, i), e = i + 1 < n ? index_off(mv, i + 1) : mv->body_len;
        unsigned t;
        /* the usual key: a short name (fixstr) */
        if (!mv->names && e <= mv->body_len && off < e && ((t = b[off]) & 0xe0) == 0xa0 &&
            off + 1 + (t & 31) < e) {
            names[i].p = (const char *)b + off + 1;
            names[i].len = t & 31;
            vat[i] = off + 1 + (t & 31);
            vend[i] = e;
            continue;
        }
        /* a row with ids: the id, its name from the table (anything amiss
         * is left to the full path, which names it) */
        uint64_t id;
        bool canon;
        unsigned hl;
        ads_error quiet;
        if (mv->names && e <= mv->body_len && off < e &&
            (hl = ads_msgpack__id_head(b + off, e - off, &id, &canon)) && off + hl < e &&
            mv->names->name(mv->names, id, &names[i], &quiet) == 0) {
            vat[i] = off + hl;
            vend[i] = e;
            continue;
        }
        size_t kat;
        int rc = ads_msgpack__view_entry(mv, i, &names[i], &kat, &vat[i], &vend[i], err);
        if (rc)
            return rc;
    }
    return 0;
}
