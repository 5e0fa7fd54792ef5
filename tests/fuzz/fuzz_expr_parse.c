/*
 * tests/fuzz/fuzz_expr_parse.c: the ClassAd parser and evaluator on any
 * bytes. Properties: a refusal carries a message, a line and a column; an
 * accepted expression evaluates without crashing (in an empty record and in
 * a record built from the same text when it is one), and its unparsed text
 * parses back to an expression whose unparsed text is the same (unparse is a
 * fixed point after one round).
 */
#include <string.h>

#include "classad/classad.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ads_arena *a = ads_arena_new();
    char *s = malloc(size ? size : 1);
    if (!a || !s) {
        free(s);
        ads_arena_free(a);
        return 0;
    }
    memcpy(s, data, size);
    const ads_expr *e;
    ads_error err;
    int rc = ads_expr_parse(&e, a, s, size, &err);
    if (rc) {
        fuzz_check(rc == ADS_ESYNTAX || rc == ADS_ELIMIT || rc == ADS_ENOMEM);
        fuzz_check(err.message[0] != '\0' && err.line >= 1 && err.column >= 1);
    } else {
        ads_value v;
        fuzz_check(ads_expr_eval(&v, e, NULL, a) == 0);
        ads_buf b1 = ADS_BUF_INIT, b2 = ADS_BUF_INIT, vb = ADS_BUF_INIT;
        ads_value_unparse(&vb, &v);
        ads_expr_unparse(&b1, e);
        const ads_expr *e2;
        rc = ads_expr_parse(&e2, a, ads_buf_cstr(&b1), b1.len, &err);
        if (rc != 0)
            fprintf(stderr, "unparsed text does not parse: %s\n%s\n", ads_buf_cstr(&b1),
                    err.message);
        fuzz_check(rc == 0);
        ads_expr_unparse(&b2, e2);
        if (strcmp(ads_buf_cstr(&b1), ads_buf_cstr(&b2)) != 0)
            fprintf(stderr, "unparse not stable:\n%s\n%s\n", ads_buf_cstr(&b1),
                    ads_buf_cstr(&b2));
        fuzz_check(strcmp(ads_buf_cstr(&b1), ads_buf_cstr(&b2)) == 0);
        ads_buf_free(&b1);
        ads_buf_free(&b2);
        ads_buf_free(&vb);
        /* the same text as a record, evaluated attribute by attribute */
        const ads_record *r;
        if (ads_record_parse(&r, a, s, size, NULL) == 0)
            for (size_t i = 0; i < ads_record_size(r); i++) {
                ads_str name = ads_record_name(r, i);
                fuzz_check(ads_record_eval_attr(&v, r, name.p, name.len, a) == 0);
            }
    }
    free(s);
    ads_arena_free(a);
    return 0;
}
