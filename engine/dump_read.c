/*
 * engine/dump_read.c: reading a dump of either encoding, item by item
 * (docs/formats.md, "Dump format"), for restore (engine/restore.c) and as
 * records for import (ads_dump_reader_*). The stream is read in chunks and
 * hashed as it goes; the trailer's counts and checksum are checked when it is
 * reached, and nothing may follow it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "classad/formats.h"
#include "engine/dump_int.h"

int ads_dump__corrupt(ads_error *err, const char *what)
{
    return ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: %s", what);
}

int ads_dump__reader_init(ads_dump_reader *r, FILE *f, ads_error *err)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->h = XXH3_createState();
    r->a = ads_arena_new();
    if (!r->h || !r->a)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    XXH3_64bits_reset(r->h);
    int c = fgetc(f);
    if (c == EOF)
        return ads_error_set(err, ADS_ECORRUPT, "the dump is empty");
    ungetc(c, f);
    r->text = c == '[';
    if (!r->text) {
        msgpack_unpacked_init(&r->res);
        r->res_ready = true;
    }
    return 0;
}

void ads_dump__reader_fini(ads_dump_reader *r)
{
    if (r->res_ready)
        msgpack_unpacked_destroy(&r->res);
    free(r->buf);
    free(r->line);
    XXH3_freeState(r->h);
    ads_arena_free(r->a);
}

static bool key_is(const msgpack_object *o, const char *s)
{
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
           memcmp(o->via.str.ptr, s, n) == 0;
}

/* The next MessagePack object and its exact bytes (for the checksum). The
 * object points into r->buf, valid until the next call. An object cut by
 * the end of the buffer is parsed again from its start once more bytes are
 * in. */
#define DUMP_OBJECT_MAX ((size_t)1 << 30)

/*
 * Whether the bytes so far of an object can be a dump's: a map or an array
 * of at most 15 members (fixmap, fixarray) that are scalars, strings or
 * bins, or a scalar (refused later). msgpack-c allocates a container's
 * members from the count in its header before it has them, so a few corrupt
 * bytes could ask for gigabytes; such objects are refused before it sees
 * them. False only when they cannot be; too few bytes to tell is true.
 */
static bool dump_shape(const unsigned char *p, size_t n)
{
    size_t items;
    if ((p[0] & 0xf0) == 0x80)
        items = 2 * (size_t)(p[0] & 0x0f);
    else if ((p[0] & 0xf0) == 0x90)
        items = p[0] & 0x0f;
    else
        return p[0] < 0xdc || p[0] > 0xdf; /* array16/32, map16/32: never */
    for (size_t at = 1, i = 0; i < items && at < n; i++) {
        unsigned char c = p[at];
        size_t len, w;
        if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
            len = 1;
        else if (c >= 0xa0 && c <= 0xbf)
            len = 1 + (size_t)(c & 0x1f);
        else if ((c >= 0x80 && c <= 0x9f) || (c >= 0xdc && c <= 0xdf))
            return false; /* a container inside: never in a dump */
        else if (c >= 0xca && c <= 0xd8) {
            static const unsigned char fixed[] = {5, 9, 2, 3, 5, 9, 2, 3, 5, 9, 3, 4, 6, 10, 18};
            len = fixed[c - 0xca];
        } else {
            /* bin, str and ext: a length of w bytes after the type byte
             * (and, for ext, a type byte after the length) */
            switch (c) {
            case 0xc4: case 0xd9: case 0xc7: w = 1; break;
            case 0xc5: case 0xda: case 0xc8: w = 2; break;
            case 0xc6: case 0xdb: case 0xc9: w = 4; break;
            default: return true; /* 0xc1: msgpack-c refuses it */
            }
            size_t head = 1 + w + (c >= 0xc7 && c <= 0xc9);
            if (n - at < head)
                return true;
            len = 0;
            for (size_t k = 0; k < w; k++)
                len = len << 8 | p[at + 1 + k];
            len += head;
        }
        at += len;
    }
    return true;
}

static int next_object(ads_dump_reader *r, const char **bytes, size_t *size, ads_error *err)
{
    for (;;) {
        if (r->bpos < r->blen) {
            if (!dump_shape((const unsigned char *)r->buf + r->bpos, r->blen - r->bpos))
                return ads_dump__corrupt(err, "an item that is not a small map or array of plain values");
            size_t off = r->bpos;
            msgpack_unpack_return ur = msgpack_unpack_next(&r->res, r->buf, r->blen, &off);
            if (ur == MSGPACK_UNPACK_SUCCESS || ur == MSGPACK_UNPACK_EXTRA_BYTES) {
                *bytes = r->buf + r->bpos;
                *size = off - r->bpos;
                r->bytes += *size;
                r->bpos = off;
                return 1;
            }
            if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            if (ur != MSGPACK_UNPACK_CONTINUE)
                return ads_dump__corrupt(err, "a MessagePack object does not parse");
        }
        /* more bytes: keep the unparsed tail, grow when it fills the buffer */
        if (r->bpos > 0) {
            memmove(r->buf, r->buf + r->bpos, r->blen - r->bpos);
            r->blen -= r->bpos;
            r->bpos = 0;
        }
        if (r->bcap - r->blen < (1u << 19)) {
            size_t cap = r->bcap ? 2 * r->bcap : (size_t)1 << 20;
            if (cap > DUMP_OBJECT_MAX)
                return ads_dump__corrupt(err, "an item of more than 1 GiB");
            char *m = realloc(r->buf, cap);
            if (!m)
                return ads_error_set(err, ADS_ENOMEM, "out of memory");
            r->buf = m;
            r->bcap = cap;
        }
        size_t n = fread(r->buf + r->blen, 1, r->bcap - r->blen, r->f);
        if (n == 0) {
            if (ferror(r->f))
                return ads_error_set(err, ADS_EIO, "reading the dump: %s", strerror(errno));
            if (r->blen > r->bpos)
                return ads_dump__corrupt(err, "it ends in the middle of an item (truncated)");
            return 0;
        }
        r->blen += n;
    }
}

static int read_item_msgpack(ads_dump_reader *r, item *it, ads_error *err)
{
    const char *bytes;
    size_t size;
    int rc = next_object(r, &bytes, &size, err);
    if (rc <= 0)
        return rc ? rc : ads_dump__corrupt(err, "it ends before its trailer (truncated)");
    const msgpack_object *o = &r->res.data;
    if (!r->started) {
        /* the header */
        if (o->type != MSGPACK_OBJECT_MAP)
            return ads_dump__corrupt(err, "it does not start with a header");
        bool fmt = false;
        int64_t version = -1;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
            if (key_is(k, "format"))
                fmt = key_is(v, DUMP_FORMAT);
            else if (key_is(k, "version") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                version = (int64_t)v->via.u64;
            else if (key_is(k, "node") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->node = v->via.u64;
        }
        if (!fmt)
            return ads_error_set(err, ADS_ECORRUPT, "this is not an adstore dump");
        if (version != DUMP_VERSION)
            return ads_error_set(err, ADS_EVERSION,
                                 "the dump is of format version %lld; this build reads version %d",
                                 (long long)version, DUMP_VERSION);
        r->started = true;
        r->node = it->node;
        XXH3_64bits_update(r->h, bytes, size);
        it->kind = -1;
        return 1;
    }
    if (o->type == MSGPACK_OBJECT_MAP) {
        /* the trailer */
        it->kind = 99;
        bool end = false;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
            if (key_is(k, "end"))
                end = v->type == MSGPACK_OBJECT_BOOLEAN && v->via.boolean;
            else if (key_is(k, "meta") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->tmeta = v->via.u64;
            else if (key_is(k, "rows") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->trows = v->via.u64;
            else if (key_is(k, "checksum") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                it->tsum = v->via.u64;
        }
        if (!end)
            return ads_dump__corrupt(err, "a map where a row belongs");
        return 1;
    }
    if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size != 3 ||
        o->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
        o->via.array.ptr[0].via.u64 > 2 || o->via.array.ptr[1].type != MSGPACK_OBJECT_BIN ||
        o->via.array.ptr[2].type != MSGPACK_OBJECT_BIN)
        return ads_dump__corrupt(err, "an item that is not [kind, key, value]");
    XXH3_64bits_update(r->h, bytes, size);
    it->kind = (int)o->via.array.ptr[0].via.u64;
    it->key = (const unsigned char *)o->via.array.ptr[1].via.bin.ptr;
    it->klen = o->via.array.ptr[1].via.bin.size;
    it->val = (const unsigned char *)o->via.array.ptr[2].via.bin.ptr;
    it->vlen = o->via.array.ptr[2].via.bin.size;
    if (it->klen == 0 || it->klen > ADS_KEY_INLINE_MAX + 16 ||
        (it->kind == ITEM_HISTORY && it->klen < 21) || (it->kind == ITEM_LATEST && it->klen < 5))
        return ads_dump__corrupt(err, "a key of an impossible size");
    return 1;
}

/* Text: each line a record. */
static int read_item_text(ads_dump_reader *r, item *it, ads_error *err)
{
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0) {
        if (ferror(r->f))
            return ads_error_set(err, ADS_EIO, "reading the dump: %s", strerror(errno));
        return ads_dump__corrupt(err, "it ends before its trailer (truncated)");
    }
    r->lineno++;
    r->bytes += (uint64_t)n;
    if (r->line[n - 1] != '\n')
        return ads_dump__corrupt(err, "its last line is cut short (truncated)");
    /* records for ads_dump_reader_next go straight into its caller's arena */
    ads_arena *a = r->rec_arena;
    if (!a) {
        ads_arena_reset(r->a);
        a = r->a;
    }
    const ads_record *rec;
    size_t len = (size_t)n;
    if (len && r->line[len - 1] == '\n')
        len--;
    r->linelen = len;
    if (ads_record_parse(&rec, a, r->line, len, err)) {
        char msg[ADS_ERROR_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s", err ? err->message : "");
        return ads_error_set(err, ADS_ECORRUPT, "the dump is corrupt: line %ld: %s", r->lineno,
                             msg);
    }
    ads_value v;
    if (!r->started) {
        ads_value ver;
        if (ads_record_eval_attr(&v, rec, "Format", 6, a) || v.type != ADS_STRING ||
            v.u.s.len != strlen(DUMP_FORMAT) || memcmp(v.u.s.p, DUMP_FORMAT, v.u.s.len) != 0)
            return ads_error_set(err, ADS_ECORRUPT, "this is not an adstore dump");
        if (ads_record_eval_attr(&ver, rec, "Version", 7, a) || ver.type != ADS_INTEGER ||
            ver.u.i != DUMP_VERSION)
            return ads_error_set(err, ADS_EVERSION,
                                 "the dump is of format version %lld; this build reads version %d",
                                 ver.type == ADS_INTEGER ? (long long)ver.u.i : -1LL,
                                 DUMP_VERSION);
        if (!ads_record_eval_attr(&v, rec, "Node", 4, a) && v.type == ADS_STRING)
            it->node = strtoull(v.u.s.p, NULL, 16);
        r->started = true;
        r->node = it->node;
        XXH3_64bits_update(r->h, r->line, (size_t)n);
        it->kind = -1;
        return 1;
    }
    if (ads_record_lookup(rec, "End", 3)) {
        it->kind = 99;
        ads_value end, m, rows, sum;
        /* the trailer is not in the checksum: each of its values is checked */
        if (ads_record_eval_attr(&end, rec, "End", 3, a) || end.type != ADS_BOOLEAN || !end.u.b)
            return ads_dump__corrupt(err, "a trailer whose End is not true");
        if (ads_record_eval_attr(&m, rec, "Meta", 4, a) ||
            ads_record_eval_attr(&rows, rec, "Rows", 4, a) ||
            ads_record_eval_attr(&sum, rec, "Checksum", 8, a) || m.type != ADS_INTEGER ||
            rows.type != ADS_INTEGER || sum.type != ADS_STRING)
            return ads_dump__corrupt(err, "a trailer without Meta, Rows and Checksum");
        it->tmeta = (uint64_t)m.u.i;
        it->trows = (uint64_t)rows.u.i;
        it->tsum = strtoull(sum.u.s.p, NULL, 16);
        return 1;
    }
    XXH3_64bits_update(r->h, r->line, (size_t)n);
    if (ads_record_lookup(rec, "Meta", 4) && !ads_record_lookup(rec, "AdType", 6)) {
        ads_value k, val;
        if (ads_record_eval_attr(&k, rec, "Meta", 4, a) ||
            ads_record_eval_attr(&val, rec, "Value", 5, a) || val.type != ADS_BLOB)
            return ads_dump__corrupt(err, "a meta line without a blob Value");
        if (k.type == ADS_STRING) {
            it->key = (const unsigned char *)k.u.s.p;
            it->klen = k.u.s.len;
        } else if (k.type == ADS_BLOB) {
            it->key = (const unsigned char *)k.u.blob->bytes.p;
            it->klen = k.u.blob->bytes.len;
        } else {
            return ads_dump__corrupt(err, "a meta key that is neither a string nor a blob");
        }
        it->val = (const unsigned char *)val.u.blob->bytes.p;
        it->vlen = val.u.blob->bytes.len;
        it->kind = ITEM_META;
        return 1;
    }
    if (ads_record_eval_attr(&v, rec, ads_attr__latest, 8, a) || v.type != ADS_BOOLEAN)
        return ads_dump__corrupt(err, "a row without __Latest");
    it->kind = v.u.b ? ITEM_LATEST : ITEM_HISTORY;
    it->rec = rec;
    return 1;
}

int ads_dump__read_item(ads_dump_reader *r, item *it, ads_error *err)
{
    memset(it, 0, sizeof *it);
    if (r->ended)
        return 0;
    int rc = r->text ? read_item_text(r, it, err) : read_item_msgpack(r, it, err);
    if (rc <= 0)
        return rc;
    if (it->kind == ITEM_META)
        r->meta++;
    else if (it->kind == ITEM_LATEST || it->kind == ITEM_HISTORY)
        r->rows++;
    else if (it->kind == 99) {
        uint64_t sum = XXH3_64bits_digest(r->h);
        if (it->trows != r->rows || it->tmeta != r->meta)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "the dump is corrupt: its trailer counts %llu rows and %llu meta "
                                 "entries, but it holds %llu and %llu",
                                 (unsigned long long)it->trows, (unsigned long long)it->tmeta,
                                 (unsigned long long)r->rows, (unsigned long long)r->meta);
        if (it->tsum != sum)
            return ads_error_set(err, ADS_ECORRUPT,
                                 "the dump is corrupt: its checksum does not match its bytes");
        r->ended = true;
        /* nothing may follow the trailer */
        int c = fgetc(r->f);
        if (!r->text && (r->bpos < r->blen || c != EOF))
            return ads_dump__corrupt(err, "bytes after the trailer");
        if (r->text && c != EOF)
            return ads_dump__corrupt(err, "lines after the trailer");
    }
    return 1;
}

/* ---- reading a dump's rows as records (import) ---- */

int ads_dump_reader_new(ads_dump_reader **out, FILE *f, ads_error *err)
{
    ads_dump_reader *r = calloc(1, sizeof *r);
    if (!r)
        return ads_error_set(err, ADS_ENOMEM, "out of memory");
    int rc = ads_dump__reader_init(r, f, err);
    if (rc) {
        ads_dump__reader_fini(r);
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void ads_dump_reader_free(ads_dump_reader *r)
{
    if (!r)
        return;
    ads_dump__reader_fini(r);
    free(r);
}

int ads_dump_reader_next(const ads_record **out, ads_dump_reader *r, ads_arena *a, ads_error *err)
{
    for (;;) {
        item it;
        r->rec_arena = a;
        int rc = ads_dump__read_item(r, &it, err);
        r->rec_arena = NULL;
        if (rc <= 0)
            return rc ? rc : 0;
        if (it.kind == 99)
            return 0;
        if (it.kind != ITEM_LATEST && it.kind != ITEM_HISTORY)
            continue;
        const ads_record *rec = it.rec;
        if (!rec) {
            row_env env;
            if ((rc = ads_row__parse(&env, it.key, it.klen, it.val, it.vlen, "row in the dump",
                                     err)))
                return rc;
            /* the record with _Timestamp and _Deleted; the store gives
             * __SystemTimestamp and __Latest anew */
            const ads_record *plain;
            if ((rc = ads_msgpack_decode_record(&plain, a, env.data, env.len, ADS_MSGPACK_COPY,
                                                err)))
                return rc;
            ads_record_builder *b;
            if ((rc = ads_record_builder_new(&b, a, err)))
                return rc;
            for (size_t i = 0; i < ads_record_size(plain) && !rc; i++) {
                ads_str n = ads_record_name(plain, i);
                rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(plain, i), err);
            }
            ads_value ts = ads_abstime(env.ts, env.offset),
                      del = ads_bool((env.flags & ROW_DELETED) != 0);
            if (rc || (rc = ads_record_builder_add_value(b, ads_attr__timestamp, 10, &ts, err)) ||
                (rc = ads_record_builder_add_value(b, ads_attr__deleted, 8, &del, err)))
                return rc;
            rec = ads_record_builder_finish(b);
        } else {
            /* a text row, parsed in the caller's arena: without the store's
             * own attributes */
            ads_record_builder *b;
            if ((rc = ads_record_builder_new(&b, a, err)))
                return rc;
            for (size_t i = 0; i < ads_record_size(it.rec) && !rc; i++) {
                ads_str n = ads_record_name(it.rec, i);
                int w = ads_row__timeline_attr(n.p, n.len);
                if (w != 2 && w != 3)
                    rc = ads_record_builder_add(b, n.p, n.len, ads_record_expr(it.rec, i), err);
            }
            if (rc)
                return rc;
            rec = ads_record_builder_finish(b);
        }
        *out = rec;
        return 1;
    }
}
