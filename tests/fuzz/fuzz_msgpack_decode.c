/*
 * tests/fuzz/fuzz_msgpack_decode.c: the MessagePack row and value decoders
 * and the record view on any bytes. Properties:
 *   - ads_msgpack_check and ads_msgpack_decode_record agree; a refusal is
 *     ADS_ECORRUPT or ADS_EVERSION with a message that names a byte offset;
 *   - an accepted row re-encodes to exactly the same bytes when it holds no
 *     expression text, and to a fixed point when it does (expression texts
 *     need only parse; the writer's spelling is ads_expr_unparse's);
 *   - the view over an accepted row finds every attribute, by its own name
 *     and by the name in upper case, with the value the decoder gave; over
 *     any bytes, lookups and an evaluation never crash;
 *   - the same holds for single values (ads_msgpack_decode_value / _expr).
 */
#include <string.h>

#include "classad/msgpack.h"
#include "tests/fuzz/fuzz.h"

static bool value_has_expr(const ads_value *v);

static bool record_has_expr(const ads_record *r)
{
    for (size_t i = 0; i < ads_record_size(r); i++) {
        const ads_value *lit = ads_expr_literal_value(ads_record_expr(r, i));
        if (!lit || value_has_expr(lit))
            return true;
    }
    return false;
}

static bool value_has_expr(const ads_value *v)
{
    switch (v->type) {
    case ADS_LIST:
        for (size_t i = 0; i < v->u.list.n; i++)
            if (value_has_expr(&v->u.list.items[i]))
                return true;
        return false;
    case ADS_RECORD:
        return record_has_expr(v->u.rec);
    case ADS_BLOB:
        return v->u.blob->meta && record_has_expr(v->u.blob->meta);
    default:
        return false;
    }
}

static void same_bytes(const ads_buf *b, const void *p, size_t n)
{
    fuzz_check(!b->failed && b->len == n && memcmp(b->p, p, n) == 0);
}

static bool same_text(const ads_expr *x, const ads_expr *y)
{
    ads_buf a = ADS_BUF_INIT, b = ADS_BUF_INIT;
    ads_expr_unparse(&a, x);
    ads_expr_unparse(&b, y);
    bool same = strcmp(ads_buf_cstr(&a), ads_buf_cstr(&b)) == 0;
    ads_buf_free(&a);
    ads_buf_free(&b);
    return same;
}

static void refused(int rc, const ads_error *err)
{
    fuzz_check(rc == ADS_ECORRUPT || rc == ADS_EVERSION);
    fuzz_check(err->code == rc && strstr(err->message, " at byte ") != NULL);
}

static void rows(const uint8_t *s, size_t size, ads_arena *a, const ads_expr *probe)
{
    ads_error err;
    const ads_record *r = NULL;
    int rc = ads_msgpack_check(s, size, &err);
    int rd = ads_msgpack_decode_record(&r, a, s, size, 0, &err);
    fuzz_check(rc == rd);
    if (rc) {
        refused(rc, &err);
    } else {
        ads_buf b = ADS_BUF_INIT, b2 = ADS_BUF_INIT;
        fuzz_check(ads_msgpack_encode_record(&b, r, &err) == 0);
        if (!record_has_expr(r)) {
            same_bytes(&b, s, size);
        } else {
            const ads_record *r2;
            fuzz_check(ads_msgpack_decode_record(&r2, a, b.p, b.len, 0, &err) == 0);
            fuzz_check(ads_msgpack_encode_record(&b2, r2, &err) == 0);
            same_bytes(&b2, b.p, b.len);
        }
        ads_buf_free(&b);
        ads_buf_free(&b2);
    }

    ads_msgpack_view mv;
    if (ads_msgpack_view_init(&mv, s, size, a, &err)) {
        fuzz_check(rc != 0); /* a row the checker accepts always opens */
    } else {
        ads_view v = ads_msgpack_view_get(&mv, NULL);
        ads_value out;
        fuzz_check(ads_expr_eval(&out, probe, &v, a) == 0);
        fuzz_check(rc != 0 || ads_msgpack_view_size(&mv) == ads_record_size(r));
        for (size_t i = 0; i < ads_msgpack_view_size(&mv); i++) {
            ads_str name;
            const ads_expr *x;
            if (ads_msgpack_view_name(&name, &mv, i, &err)) {
                fuzz_check(rc != 0);
                continue;
            }
            int found = ads_msgpack_view_lookup(&out, &x, &mv, name.p, name.len, &err);
            if (rc != 0)
                continue;
            /* an accepted row: found, by any case, as the decoder has it */
            fuzz_check(found == 1);
            char *upper = ads_arena_alloc(a, name.len + 1);
            fuzz_check(upper != NULL);
            for (size_t k = 0; k < name.len; k++)
                upper[k] = (char)((name.p[k] >= 'a' && name.p[k] <= 'z') ? name.p[k] - 32
                                                                         : name.p[k]);
            ads_value out2;
            const ads_expr *x2;
            fuzz_check(ads_msgpack_view_lookup(&out2, &x2, &mv, upper, name.len, &err) == 1);
            const ads_expr *want = ads_record_lookup(r, name.p, name.len);
            fuzz_check(want != NULL);
            const ads_value *lit = ads_expr_literal_value(want);
            if (lit && !x) {
                fuzz_check(ads_value_same(lit, &out));
                fuzz_check(!x2 && ads_value_same(lit, &out2));
            } else {
                fuzz_check(x && x2 && same_text(want, x) && same_text(x, x2));
            }
        }
    }
}

static void values(const uint8_t *s, size_t size, ads_arena *a)
{
    ads_error err;
    ads_value v;
    const ads_expr *e;
    int rc = ads_msgpack_decode_value(&v, a, s, size, 0, &err);
    if (rc == 0) {
        ads_buf b = ADS_BUF_INIT;
        fuzz_check(ads_msgpack_encode_value(&b, &v, &err) == 0);
        if (!value_has_expr(&v))
            same_bytes(&b, s, size);
        ads_buf_free(&b);
    } else if (rc != ADS_EINVAL) { /* EINVAL: an expression where a value belongs */
        refused(rc, &err);
    }
    int re = ads_msgpack_decode_expr(&e, a, s, size, ADS_MSGPACK_COPY, &err);
    fuzz_check(re == 0 || rc != 0);
    if (re == 0) {
        ads_buf b = ADS_BUF_INIT, b2 = ADS_BUF_INIT;
        fuzz_check(ads_msgpack_encode_expr(&b, e, &err) == 0);
        const ads_value *lit = ads_expr_literal_value(e);
        if (lit && !value_has_expr(lit)) {
            same_bytes(&b, s, size);
        } else {
            const ads_expr *e2;
            fuzz_check(ads_msgpack_decode_expr(&e2, a, b.p, b.len, 0, &err) == 0);
            fuzz_check(ads_msgpack_encode_expr(&b2, e2, &err) == 0);
            same_bytes(&b2, b.p, b.len);
        }
        ads_value out;
        fuzz_check(ads_expr_eval(&out, e, NULL, a) == 0);
        ads_buf_free(&b);
        ads_buf_free(&b2);
    } else {
        refused(re, &err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char probe_text[] =
        "Memory > 1024 && Arch == \"X86_64\" && (Disk >= 100000 || Owner == \"alice\") "
        "|| a.b[0] + size(c) || { d, e }[1] || strcat(f, g) || [ x = h ].x";
    ads_arena *a = ads_arena_new();
    /* an exact-size copy, so AddressSanitizer sees any over-read */
    uint8_t *s = malloc(size ? size : 1);
    const ads_expr *probe;
    if (!a || !s || ads_expr_parse(&probe, a, probe_text, sizeof probe_text - 1, NULL)) {
        free(s);
        ads_arena_free(a);
        return 0;
    }
    memcpy(s, data, size);
    rows(s, size, a, probe);
    values(s, size, a);
    free(s);
    ads_arena_free(a);
    return 0;
}
